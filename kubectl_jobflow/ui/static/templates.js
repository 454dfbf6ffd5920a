// kubectl jobflow ui: the JobFlowTemplates section of the list page (docs/templates.md). Each template
// with its params (a required one marked *) and links to its runs (newest first). Refreshed every 5 s
// from /api/jobflowtemplates; the JobFlow table above it is app.js's and is left alone.
"use strict";

(function () {
  var esc = JobflowDag.esc;
  var MAX_RUNS = 5;
  var timer = null;

  function runLink(namespace, run) {
    return '<a class="cron-run" href="#/flow/' + encodeURIComponent(namespace) + "/" + encodeURIComponent(run.name) +
      '"><span class="badge ph-' + esc(run.phase) + '">' + esc(run.phase) + "</span> " + esc(run.name) + "</a>";
  }

  function param(p) {
    return p.default === null ? esc(p.name) + "*" : esc(p.name) + "=" + esc(p.default);
  }

  function row(r) {
    var runs = r.runs.slice(0, MAX_RUNS).map(function (run) { return runLink(r.namespace, run); }).join(" ");
    if (r.runs.length > MAX_RUNS) runs += ' <span class="muted">+' + (r.runs.length - MAX_RUNS) + "</span>";
    return '<tr data-key="' + esc(r.key) + '"><td>' + esc(r.namespace) + "</td><td>" + esc(r.name) + "</td><td><code>" +
      r.params.map(param).join(", ") + "</code></td><td>" + esc(String(r.flows)) + "</td><td>" +
      (runs || '<span class="muted">none yet</span>') + "</td></tr>";
  }

  function render(doc) {
    var section = document.getElementById("templates");
    if (!section) return;
    section.innerHTML = "<h2>JobFlowTemplates</h2>" + (doc.note ? '<p class="muted">' + esc(doc.note) + "</p>" : "") +
      (doc.rows.length ? "<table><thead><tr><th>Namespace</th><th>Name</th><th>Params</th><th>Flows</th>" +
        "<th>Runs</th></tr></thead><tbody>" + doc.rows.map(row).join("") + "</tbody></table>" :
        (doc.note ? "" : '<p class="muted">none</p>'));
  }

  function refresh() {
    if (!document.getElementById("templates")) return;
    fetch("api/jobflowtemplates").then(function (res) { return res.json(); })
      .then(render).catch(function () {});
  }

  function place() {
    var main = document.getElementById("main");
    var onList = !/^#\/flow\//.test(location.hash);
    var section = document.getElementById("templates");
    if (onList && !section && document.getElementById("rows")) {
      section = document.createElement("section");
      section.id = "templates";
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
