// kubectl jobflow ui: the CronJobFlows section of the list page (docs/cron.md). Each CronJobFlow with
// its schedule, its next run and links to its JobFlows (newest first). Refreshed every 5 s from
// /api/cronjobflows; the JobFlow table above it is app.js's and is left alone.
"use strict";

(function () {
  var esc = JobflowDag.esc;
  var MAX_RUNS = 5;
  var timer = null;

  function flowLink(namespace, run) {
    return '<a class="cron-run" href="#/flow/' + encodeURIComponent(namespace) + "/" + encodeURIComponent(run.name) +
      '"><span class="badge ph-' + esc(run.phase) + '">' + esc(run.phase) + "</span> " + esc(run.name) + "</a>";
  }

  function row(r) {
    var next = r.next ? esc(r.next) : '<span class="muted">' + esc(r.nextProblem) + "</span>";
    var runs = r.runs.slice(0, MAX_RUNS).map(function (run) { return flowLink(r.namespace, run); }).join(" ");
    if (r.runs.length > MAX_RUNS) runs += ' <span class="muted">+' + (r.runs.length - MAX_RUNS) + "</span>";
    return '<tr data-key="' + esc(r.key) + '"><td>' + esc(r.namespace) + "</td><td>" + esc(r.name) + "</td><td><code>" +
      esc(r.schedule) + "</code>" + (r.timeZone ? " " + esc(r.timeZone) : "") + "</td><td>" + (r.suspend ? "yes" : "") +
      '</td><td class="cron-next">' + next + "</td><td>" + esc(r.lastSchedule || "") + "</td><td>" +
      (runs || '<span class="muted">none yet</span>') + "</td></tr>";
  }

  function render(doc) {
    var section = document.getElementById("cron");
    if (!section) return;
    section.innerHTML = "<h2>CronJobFlows</h2>" + (doc.note ? '<p class="muted">' + esc(doc.note) + "</p>" : "") +
      (doc.rows.length ? "<table><thead><tr><th>Namespace</th><th>Name</th><th>Schedule</th><th>Suspended</th>" +
        "<th>Next run (UTC)</th><th>Last schedule</th><th>JobFlows</th></tr></thead><tbody>" +
        doc.rows.map(row).join("") + "</tbody></table>" : (doc.note ? "" : '<p class="muted">none</p>'));
  }

  function refresh() {
    if (!document.getElementById("cron")) return;
    // Authenticated by the session's cookie, as app.js's requests (kubectl_jobflow/ui/auth.py).
    fetch("api/cronjobflows").then(function (res) { return res.json(); })
      .then(render).catch(function () {});
  }

  // app.js draws the list page into #main on every visit; the section goes after its table.
  function place() {
    var main = document.getElementById("main");
    var onList = !/^#\/flow\//.test(location.hash);
    var section = document.getElementById("cron");
    if (onList && !section && document.getElementById("rows")) {
      section = document.createElement("section");
      section.id = "cron";
      main.appendChild(section);
      refresh();
    }
    if (onList && !timer) timer = setInterval(refresh, 5000);
    if (!onList && timer) { clearInterval(timer); timer = null; }
  }

  new MutationObserver(place).observe(document.getElementById("main"), { childList: true });
  window.addEventListener("hashchange", place);
  place();
})();
