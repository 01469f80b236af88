// The replay viewer: the arrow keys step back and forward, Home and End jump to the ends.
(function () {
  "use strict";
  var keys = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" };
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) { return; }
    var target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) { return; }
    var link = keys[event.key] && document.getElementById(keys[event.key]);
    if (link && link.getAttribute("aria-disabled") !== "true") {
      event.preventDefault();
      window.location.assign(link.href);
    }
  });
})();
