// The live view: fetch the server-rendered fragment every few seconds and swap it in.
// The fragment is built (and escaped) by the same template as the first render.
(function () {
  "use strict";
  var box = document.getElementById("live");
  var status = document.getElementById("live-status");
  if (!box) { return; }
  var src = box.getAttribute("data-src");
  var every = parseInt(box.getAttribute("data-interval"), 10) || 1500;
  var busy = false;

  function refresh() {
    if (busy || document.hidden) { return; }
    busy = true;
    fetch(src, { headers: { "Accept": "text/html" }, cache: "no-store" })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.text();
      })
      .then(function (html) {
        box.innerHTML = html;
        status.textContent = "live · updated " + new Date().toLocaleTimeString();
        status.className = "";
      })
      .catch(function (error) {
        status.textContent = "cannot reach the dashboard (" + error.message + "), retrying";
        status.className = "fault";
      })
      .finally(function () { busy = false; });
  }

  setInterval(refresh, every);
})();
