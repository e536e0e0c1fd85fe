// The console's pages update themselves: every data-refresh seconds the page is fetched again and
// its <main> replaced, unless the user is typing in a form. The chart reads the server's samples.
(function () {
  "use strict";

  var charts = [];

  function drawCharts() {
    charts.forEach(function (c) { c.destroy(); });
    charts = [];
    document.querySelectorAll(".chart[data-src]").forEach(function (box) {
      fetch(box.getAttribute("data-src"), { credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (s) {
          box.textContent = "";
          var width = Math.max(280, box.clientWidth || 600);
          var opts = {
            width: width,
            height: 240,
            series: [
              {},
              { label: "depth", stroke: "#2457c5", scale: "msgs" },
              { label: "publish/s", stroke: "#0f9d58", scale: "rate" },
              { label: "ack/s", stroke: "#f4a300", scale: "rate" },
              { label: "lag", stroke: "#b42318", scale: "msgs" }
            ],
            axes: [{}, { scale: "msgs", label: "messages" }, { scale: "rate", side: 1, label: "per second", grid: { show: false } }]
          };
          if (s.data[0].length === 0) {
            box.textContent = "No sample yet.";
            return;
          }
          charts.push(new uPlot(opts, s.data, box));
        })
        .catch(function () { box.textContent = "The samples could not be read."; });
    });
  }

  function editing() {
    var a = document.activeElement;
    return a && (a.tagName === "INPUT" || a.tagName === "TEXTAREA" || a.tagName === "SELECT");
  }

  function refresh() {
    if (editing() || document.hidden) {
      return;
    }
    fetch(window.location.href, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html === null || editing()) {
          return;
        }
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("main");
        var main = document.getElementById("main");
        if (fresh && main) {
          main.innerHTML = fresh.innerHTML;
          document.body.setAttribute("data-updated", String(Date.now()));
          drawCharts();
        }
      })
      .catch(function () { /* the next round tries again */ });
  }

  drawCharts();
  var seconds = parseInt(document.body.getAttribute("data-refresh") || "0", 10);
  if (seconds > 0) {
    window.setInterval(refresh, seconds * 1000);
  }
})();
