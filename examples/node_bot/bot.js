// A 6 nimmt! bot in JavaScript: it speaks the referee's protocol (docs/protocol.md) itself,
// with @grpc/grpc-js and the project's .proto files, and no part of the Python SDK.
//
// It reads the referee's address and its token from SIXNIMMT_REFEREE and SIXNIMMT_TOKEN, as
// every bot process started by `sixnimmt bot play`, `bot check` or a league does, plays every
// match of its token over one stream, and exits 0 after the referee's goodbye.
//
// Classic: the card with the fewest bull heads it would take now (the smallest gap to its row's
// last card among the free ones), and for a low card the row with the fewest bull heads. Any
// other game or decision: its first legal option.
"use strict";

const fs = require("fs");
const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

// The .proto files: beside the bundle (dist/proto, copied by `npm run build`), else the repository's.
const PROTO_DIRS = [
  process.env.SIXNIMMT_PROTO_DIR,
  path.join(__dirname, "proto"),
  path.join(__dirname, "..", "..", "proto"),
].filter(Boolean);

function loadReferee() {
  const root = PROTO_DIRS.find((dir) => fs.existsSync(path.join(dir, "sixnimmt", "v1", "referee.proto")));
  if (!root) throw new Error(`no sixnimmt/v1/referee.proto under ${PROTO_DIRS.join(", ")}`);
  const definition = protoLoader.loadSync("sixnimmt/v1/referee.proto", {
    includeDirs: [root],
    keepCase: true, // field names as in the .proto: match_id, tuple_options
    longs: String, // uint64 ids and seeds as decimal strings: a JS number loses digits past 2^53
    enums: String, // kind: "DECISION_KIND_CARD"
    defaults: true, // absent scalars read as 0 / "" / [] rather than undefined
    oneofs: true, // message.kind names the oneof field that is set
  });
  return grpc.loadPackageDefinition(definition).sixnimmt.v1;
}

// The bull heads printed on a classic card (referee/rules/cards.py).
function bullHeads(card) {
  if (card === 55) return 7;
  if (card % 11 === 0 && card < 100) return 5;
  if (card % 10 === 0) return 3;
  if (card % 5 === 0) return 2;
  return 1;
}

const rowHeads = (row) => row.cards.reduce((sum, card) => sum + bullHeads(card), 0);

// Classic's rules 1-4 for one card on its own: [bull heads it takes now, gap to its row's last card].
function risk(card, view) {
  let best = -1;
  view.rows.forEach((row, index) => {
    const last = row.cards[row.cards.length - 1];
    if (last < card && (best < 0 || last > view.rows[best].cards[view.rows[best].cards.length - 1])) best = index;
  });
  if (best < 0) return [Math.min(...view.rows.map(rowHeads)), card]; // a low card takes a row
  const row = view.rows[best].cards;
  const gap = card - row[row.length - 1];
  return [row.length >= view.row_capacity ? rowHeads(view.rows[best]) : 0, gap];
}

function decide(request) {
  const view = request.view === "classic" ? request.classic : null;
  if (request.kind === "DECISION_KIND_CARD" && view) {
    const scored = request.options.map((card) => [risk(card, view), card]);
    scored.sort((a, b) => a[0][0] - b[0][0] || a[0][1] - b[0][1] || a[1] - b[1]);
    return { number: scored[0][1] };
  }
  if (request.kind === "DECISION_KIND_ROW" && view) {
    // Row indices count from 0, in the order of view.rows.
    const row = request.options.reduce((a, b) => (rowHeads(view.rows[b]) < rowHeads(view.rows[a]) ? b : a));
    return { number: row };
  }
  if (request.tuple_options.length > 0) return { tuple: { values: request.tuple_options[0].values } };
  return { number: request.options[0] };
}

function main() {
  const address = process.env.SIXNIMMT_REFEREE;
  const token = process.env.SIXNIMMT_TOKEN;
  if (!address || !token) {
    console.error("bot: error: SIXNIMMT_REFEREE and SIXNIMMT_TOKEN must be set");
    process.exit(2);
  }
  const v1 = loadReferee();
  const client = new v1.Referee(address, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": 64 << 20,
  });
  // The token in the call's metadata too: the referee admits the stream within this token's own
  // limits before reading anything, so no other client's flood can keep it out (docs/protocol.md).
  const metadata = new grpc.Metadata();
  metadata.set("sixnimmt-token", token);
  const stream = client.Play(metadata);
  let games = 0;
  let decisions = 0;
  let ended = false;
  stream.on("data", (message) => {
    if (message.kind === "update") {
      const update = message.update;
      games += update.starts.length;
      for (const fault of update.faults) console.error(`bot: fault (${fault.kind}) in match ${fault.match_id}: ${fault.reason}`);
      if (update.requests.length === 0) return;
      const replies = update.requests.map((request) => {
        try {
          return { id: request.id, action: decide(request) };
        } catch (error) {
          return { id: request.id, error: String(error && error.stack ? error.stack : error).slice(-1000) };
        }
      });
      decisions += replies.length;
      stream.write({ decisions: { replies } });
    } else if (message.kind === "goodbye") {
      ended = true;
      stream.end();
    }
  });
  stream.on("error", (error) => {
    if (ended && error.code === grpc.status.CANCELLED) return;
    console.error(`bot: error: ${error.code === undefined ? "" : grpc.status[error.code] + ": "}${error.details || error.message}`);
    process.exitCode = 1;
  });
  stream.on("end", () => {
    console.error(`node_bot: ${games} games, ${decisions} decisions`);
    client.close();
    if (!ended) process.exitCode = 1; // the referee ended the stream without a goodbye
  });
  // Hello first: the token, a name for the logs, protocol version 1 (0 is refused).
  stream.write({ hello: { token, name: "node_bot", protocol: 1 } });
}

main();
