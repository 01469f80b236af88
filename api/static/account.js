// A pending validation's page: ask for its state every few seconds; reload once it changes.
"use strict";
(function () {
  const body = document.body;
  const url = body.dataset.poll;
  if (!url) return;
  const every = Number(body.dataset.pollMs) || 2000;
  const tick = () => {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : null))
      .then((answer) => {
        if (answer && answer.state !== body.dataset.state) {
          window.location.reload();
        } else {
          window.setTimeout(tick, every);
        }
      })
      .catch(() => window.setTimeout(tick, every * 2));
  };
  window.setTimeout(tick, every);
})();
