// A person's seat at the table (dashboard/table): follow the seat's state with a long poll, swap
// in the server-rendered table (escaped by the same template as the first render), send choices.
// Keys: 1-9 (or the digits of a larger number) pick an option, the arrow keys move among them,
// Enter plays the picked one. docs/play.md lists the page's ids and hooks.
(function () {
  "use strict";
  var play = document.getElementById("play");
  var box = document.getElementById("table-box");
  var connection = document.getElementById("connection");
  if (!play || !box) { return; }
  var stateUrl = play.getAttribute("data-state");
  var chooseUrl = play.getAttribute("data-choose");
  var version = null;
  var clockAt = 0;
  var typed = "";
  var typedAt = 0;

  function table() { return document.getElementById("table"); }
  function options() { return Array.prototype.slice.call(box.querySelectorAll("button.option")); }

  var title = document.title;

  function shown() {
    var t = table();
    version = t ? parseInt(t.getAttribute("data-version"), 10) : null;
    // In another tab, the title says when the seat waits for this person.
    document.title = (t && t.getAttribute("data-status") === "deciding" ? "● Your turn · " : "") + title;
    clockAt = performance.now();
    tick();
    var first = options().filter(function (b) { return !b.disabled; })[0];
    if (first && !box.contains(document.activeElement)) { first.focus({ preventScroll: true }); }
  }

  function poll() {
    var url = stateUrl + "?wait=20" + (version === null ? "" : "&after=" + version);
    fetch(url, { cache: "no-store", headers: { "Accept": "application/json" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.json();
      })
      .then(function (data) {
        connection.textContent = "";
        connection.className = "muted";
        if (data.state.version !== version) {
          box.innerHTML = data.html;
          shown();
        }
        if (!data.state.closed) { poll(); }
      })
      .catch(function (error) {
        connection.textContent = "cannot reach the table (" + error.message + "), retrying";
        connection.className = "fault";
        setTimeout(poll, 1000);
      });
  }

  function choose(button) {
    var t = table();
    if (!t || button.disabled) { return; }
    var request = parseInt(t.getAttribute("data-request"), 10);
    var index = parseInt(button.getAttribute("data-index"), 10);
    options().forEach(function (b) { b.disabled = true; });
    button.classList.add("chosen");
    fetch(chooseUrl, {
      method: "POST",
      cache: "no-store",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ request_id: request, index: index })
    })
      .then(function (response) {
        return response.json().then(function (data) {
          if (!response.ok) { throw new Error(data.error || ("HTTP " + response.status)); }
        });
      })
      .catch(function (error) {
        connection.textContent = "your choice was not taken: " + error.message;
        connection.className = "fault";
      });
  }

  function seconds(ms) { return Math.max(0, Math.ceil(ms / 1000)); }

  function tick() {
    var clock = document.getElementById("clock");
    if (!clock || !clock.hasAttribute("data-decision-left")) { return; }
    var spent = performance.now() - clockAt;
    var left = parseInt(clock.getAttribute("data-decision-left"), 10) - spent;
    var bank = parseInt(clock.getAttribute("data-bank-left"), 10);
    if (left < 0) { bank += left; left = 0; }
    if (left <= 0 && bank <= 0) {
      clock.textContent = "time is up";
      clock.className = "clock late";
    } else if (left <= 0) {
      clock.textContent = "bank " + seconds(bank) + " s";
      clock.className = "clock bank";
    } else {
      clock.textContent = seconds(left) + " s + bank " + seconds(bank) + " s";
      clock.className = "clock running";
    }
  }

  function focusOption(index) {
    var list = options();
    if (index >= 0 && index < list.length) { list[index].focus(); }
  }

  box.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button.option") : null;
    if (button) { choose(button); }
  });

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) { return; }
    var list = options();
    if (!list.length) { return; }
    var at = list.indexOf(document.activeElement);
    if (/^[0-9]$/.test(event.key)) {
      var now = performance.now();
      typed = (now - typedAt < 1200 ? typed : "") + event.key;
      typedAt = now;
      var number = parseInt(typed, 10);
      if (number < 1 || number > list.length) { typed = event.key; number = parseInt(typed, 10); }
      focusOption(number - 1);
      event.preventDefault();
    } else if (event.key === "ArrowRight" || event.key === "ArrowDown") {
      focusOption(at < 0 ? 0 : Math.min(list.length - 1, at + 1));
      event.preventDefault();
    } else if (event.key === "ArrowLeft" || event.key === "ArrowUp") {
      focusOption(at < 0 ? 0 : Math.max(0, at - 1));
      event.preventDefault();
    } else if (event.key === "Enter" && at >= 0) {
      choose(list[at]);
      event.preventDefault();
    }
  });

  setInterval(tick, 250);
  shown();
  poll();
})();
