// kubectl jobflow ui: the JobFlowTriggers section of the list page (docs/triggers.md). Each trigger
// with its template, its source, how often it fired and links to its runs (newest first). Refreshed
// every 5 s from /api/jobflowtriggers; placed after the CronJobFlows section, as cron.js places its own.
"use strict";

(function () {
  var esc = JobflowDag.esc;
  var MAX_RUNS = 5;
  var timer = null;

  function runLink(namespace, run) {
    return '<a class="cron-run" href="#/flow/' + encodeURIComponent(namespace) + "/" + encodeURIComponent(run.name) +
      '"><span class="badge ph-' + esc(run.phase) + '">' + esc(run.phase) + "</span> " + esc(run.name) + "</a>";
  }

  function row(r) {
    var runs = r.runs.slice(0, MAX_RUNS).map(function (run) { return runLink(r.namespace, run); }).join(" ");
    if (r.runs.length > MAX_RUNS) runs += ' <span class="muted">+' + (r.runs.length - MAX_RUNS) + "</span>";
    return "<tr><td>" + esc(r.namespace) + "</td><td>" + esc(r.name) + "</td><td>" + esc(r.template) + "</td><td>" +
      esc(r.source) + "</td><td>" + esc(String(r.triggered)) + "</td><td>" + esc(r.lastTriggerTime || "") + "</td><td>" +
      (runs || '<span class="muted">none</span>') + "</td></tr>";
  }

  function render(doc) {
    var section = document.getElementById("triggers");
    if (!section) return;
    section.innerHTML = "<h2>JobFlowTriggers</h2>" + (doc.note ? '<p class="muted">' + esc(doc.note) + "</p>" : "") +
      (doc.rows.length ? "<table><thead><tr><th>Namespace</th><th>Name</th><th>Template</th><th>Source</th>" +
        "<th>Triggered</th><th>Last trigger</th><th>Runs</th></tr></thead><tbody>" +
        doc.rows.map(row).join("") + "</tbody></table>" : (doc.note ? "" : '<p class="muted">none</p>'));
  }

  function refresh() {
    if (!document.getElementById("triggers")) return;
    fetch("api/jobflowtriggers").then(function (res) { return res.json(); })
      .then(render).catch(function () {});
  }

  function place() {
    var main = document.getElementById("main");
    var onList = !/^#\/flow\//.test(location.hash);
    var section = document.getElementById("triggers");
    if (onList && !section && document.getElementById("rows")) {
      section = document.createElement("section");
      section.id = "triggers";
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
