// kubectl jobflow ui: the list of JobFlows and one JobFlow's page, fed by server-sent events.
// Routes live in the hash (#/ and #/flow/<namespace>/<name>). The entry URL's token was exchanged
// for an HttpOnly cookie by the response that served this page (kubectl_jobflow/ui/auth.py): it is
// dropped from the address bar and the tab's history entry here, and every request below is
// authenticated by that cookie, which no script can read. Every URL below is relative: the page is
// served under the session's secret path prefix, the only path the cookie is sent to.
"use strict";

(function () {
  if (location.search) history.replaceState(null, "", location.pathname + location.hash);
  var esc = JobflowDag.esc;
  var PHASES = ["Pending", "Running", "Terminating", "Succeed", "Failed"];
  var LEGEND = ["Waiting", "Pending", "Running", "Completed", "Failed", "Terminated", "Skipped", "Aborted", "NotCreated"];
  var LABELS = { NotCreated: "Not created" };
  var CONFIRM = {
    suspend: "Suspend {key}? No new Job is created until it is resumed; running Jobs go on.",
    resume: "Resume {key}? Flows whose dependencies are met get their Jobs again.",
    stop: "Stop {key}? No new Job is created and running Jobs run to their end. This cannot be undone.",
    terminate: "Terminate {key}? Its running Jobs are terminated and no new Job is created. This cannot be undone.",
    retry: "Retry {key}? {flows} run again."
  };
  var state = { source: null, rows: new Map(), scope: "", page: null, selected: null, timer: null, zoom: "fit" };
  var ui = (window.jobflowUI = { lastRenderMs: null, draws: 0, updates: 0, state: state });
  var main = document.getElementById("main");

  // Replaces an element's content only when it differs: a button under the pointer survives the
  // pushes that did not change it (a click between mousedown and mouseup is not lost).
  function setHTML(el, html) {
    if (el.jobflowHTML === html) return;
    el.jobflowHTML = html;
    el.innerHTML = html;
  }

  function seconds(from, to) {
    if (!from) return null;
    var end = to ? Date.parse(to) : Date.now();
    return Math.max(0, (end - Date.parse(from)) / 1000);
  }

  function human(s) {
    if (s == null) return "–";
    s = Math.floor(s);
    var d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60), r = s % 60;
    if (d) return d + "d" + (h ? h + "h" : "");
    if (h) return h + "h" + (m ? m + "m" : "");
    if (m) return m + "m" + (r ? r + "s" : "");
    return r + "s";
  }

  function badge(phase, extra) {
    return '<span class="badge ph-' + esc(phase) + (extra ? " " + extra : "") + '">' + esc(LABELS[phase] || phase) + "</span>";
  }

  function flags(row) {
    var out = "";
    if (row.suspended) out += ' <span class="badge small">suspended</span>';
    if (row.shutdown) out += ' <span class="badge small">' + esc(row.shutdown.toLowerCase()) + "</span>";
    return out;
  }

  function connect(path, handlers) {
    if (state.source) state.source.close();
    var conn = document.getElementById("conn");
    var source = new EventSource(path);
    Object.keys(handlers).forEach(function (name) {
      source.addEventListener(name, function (e) { handlers[name](JSON.parse(e.data)); });
    });
    source.onopen = function () { conn.textContent = "live"; conn.className = "conn live"; };
    source.onerror = function () { conn.textContent = "reconnecting"; conn.className = "conn down"; };
    state.source = source;
  }

  function every(ms, fn) {
    if (state.timer) clearInterval(state.timer);
    state.timer = setInterval(fn, ms);
  }

  // -- the list ----------------------------------------------------------------------------------
  function showList() {
    document.getElementById("crumb").textContent = "";
    main.innerHTML = '<div class="filters"><label>Namespace <select id="f-ns"><option value="">all</option></select></label>' +
      '<label>Phase <select id="f-phase"><option value="">all</option>' +
      PHASES.map(function (p) { return "<option>" + p + "</option>"; }).join("") + "</select></label>" +
      '<label>Name <input id="f-name" type="search" placeholder="filter"></label>' +
      '<span id="count" class="muted"></span></div>' +
      "<table><thead><tr><th>Namespace</th><th>Name</th><th>Phase</th><th>Progress</th><th>Age</th>" +
      '<th>Duration</th></tr></thead><tbody id="rows"></tbody></table>';
    ["f-ns", "f-phase", "f-name"].forEach(function (id) {
      document.getElementById(id).addEventListener("input", renderList);
    });
    state.rows = new Map();
    connect("api/stream/list", {
      snapshot: function (doc) {
        state.rows = new Map(doc.rows.map(function (r) { return [r.key, r]; }));
        state.scope = doc.scope;
        renderList();
      },
      changes: function (doc) {
        doc.rows.forEach(function (r) { state.rows.set(r.key, r); });
        doc.removed.forEach(function (k) { state.rows.delete(k); });
        ui.updates++;
        renderList();
      }
    });
    every(1000, renderList);
  }

  function syncNamespaces(select) {
    var wanted = Array.from(new Set(Array.from(state.rows.values()).map(function (r) { return r.namespace; }))).sort();
    var have = Array.from(select.options).slice(1).map(function (o) { return o.value; });
    if (wanted.join("\n") === have.join("\n")) return;
    var current = select.value;
    select.innerHTML = '<option value="">all</option>' + wanted.map(function (n) {
      return '<option value="' + esc(n) + '">' + esc(n) + "</option>";
    }).join("");
    select.value = wanted.indexOf(current) >= 0 ? current : "";
  }

  function listRow(r) {
    return '<tr data-key="' + esc(r.key) + '" data-phase="' + esc(r.phase) + '"><td>' + esc(r.namespace) + "</td>" +
      '<td><a href="#/flow/' + encodeURIComponent(r.namespace) + "/" + encodeURIComponent(r.name) + '">' +
      esc(r.name) + "</a></td><td>" + badge(r.phase) + flags(r) + "</td>" +
      '<td><progress max="' + (r.total || 1) + '" value="' + r.done + '"></progress> <span class="done">' +
      r.done + "/" + r.total + "</span></td><td>" + human(seconds(r.created)) + "</td><td>" +
      human(seconds(r.created, r.finished)) + "</td></tr>";
  }

  function renderList() {
    var body = document.getElementById("rows");
    if (!body) return;
    var start = performance.now();
    var ns = document.getElementById("f-ns"), phase = document.getElementById("f-phase").value;
    var name = document.getElementById("f-name").value.trim();
    syncNamespaces(ns);
    var all = Array.from(state.rows.values());
    var shown = all.filter(function (r) {
      return (!ns.value || r.namespace === ns.value) && (!phase || r.phase === phase) &&
        (!name || r.name.indexOf(name) >= 0);
    }).sort(function (a, b) { return a.key < b.key ? -1 : a.key > b.key ? 1 : 0; });
    body.innerHTML = shown.map(listRow).join("");
    document.getElementById("count").textContent = shown.length + " of " + all.length + " JobFlows" +
      (state.scope ? ' in namespace "' + state.scope + '"' : "");
    ui.lastListRenderMs = performance.now() - start;
  }

  // -- one JobFlow --------------------------------------------------------------------------------
  function showFlow(namespace, name) {
    var key = namespace + "/" + name;
    document.getElementById("crumb").textContent = "/ " + key;
    state.page = null;
    state.selected = null;
    state.gone = null;
    main.innerHTML = '<div id="summary" class="summary"><h1>' + esc(name) + "</h1></div>" +
      '<div id="toolbar" class="toolbar"></div><div class="legend">' +
      LEGEND.map(function (p) { return badge(p); }).join("") + '<span class="badge ph-Waiting">finally: dashed</span>' +
      '<span class="zoom"><button type="button" data-zoom="out" title="zoom out">−</button>' +
      '<button type="button" data-zoom="in" title="zoom in">+</button>' +
      '<button type="button" data-zoom="fit" title="fit the width">fit</button>' +
      '<button type="button" data-zoom="1" title="actual size">1:1</button></span></div>' +
      '<div class="workspace"><div id="dag" class="dag"></div><aside id="side" class="side">' +
      '<p class="muted">Click a flow to see its Job.</p></aside></div>' +
      '<section id="jobflow-results" class="own-results" hidden></section>' +
      '<section class="events"><h2>Events</h2><div id="events"></div></section>';
    document.getElementById("dag").addEventListener("click", function (e) {
      var g = e.target.closest("g.node");
      if (!g) return;
      state.selected = g.getAttribute("data-flow");
      JobflowDag.select(document.getElementById("dag"), state.selected);
      renderSide();
    });
    main.querySelector(".zoom").addEventListener("click", onZoom);
    var dagBox = document.getElementById("dag");
    if (window.ResizeObserver) {
      // "fit" follows the width the DAG is given (a scrollbar appearing, the window resized).
      new ResizeObserver(function () {
        if (state.zoom === "fit") state.factor = JobflowDag.zoom(dagBox, "fit");
      }).observe(dagBox);
    }
    document.getElementById("toolbar").addEventListener("click", onAction);
    document.getElementById("side").addEventListener("click", onAction);
    connect("api/stream/jobflow?key=" + encodeURIComponent(key), {
      page: function (page) {
        // Opened before the UI's cache had it (just created), or deleted and made again: the message
        // replaced the page, so build the page anew, on a new stream that starts with this JobFlow.
        if (state.gone === key) return showFlow(namespace, name);
        renderPage(page);
      },
      gone: function () {
        state.gone = key;
        main.innerHTML = '<p class="muted">JobFlow ' + esc(key) + ' does not exist (any more). <a href="#/">All JobFlows</a></p>';
      }
    });
    every(1000, renderSummary);
  }

  function renderPage(page) {
    state.page = page;
    ui.updates++;
    renderSummary();
    renderToolbar();
    var dag = document.getElementById("dag");
    var took = JobflowDag.render(dag, page);
    if (took != null) {
      state.factor = JobflowDag.zoom(dag, state.zoom);
      ui.lastRenderMs = took;
      ui.drawnAt = performance.now(); // since the page's navigation started
      ui.draws++;
    }
    if (state.selected) JobflowDag.select(dag, state.selected);
    renderSide();
    renderOwnResults(page.results || []);
    setHTML(document.getElementById("events"), eventsTable(page.events));
  }

  function renderSummary() {
    var p = state.page, box = document.getElementById("summary");
    if (!p || !box) return;
    var fields = [
      ["phase", badge(p.phase) + flags(p)],
      ["progress", p.done + "/" + p.total + " flows"],
      ["age", human(seconds(p.created))],
      ["duration", human(seconds(p.created, p.finished))],
      ["failure policy", esc(p.failurePolicy)]
    ];
    if (p.suspendedSince) fields.push(["suspended since", esc(p.suspendedSince) + " (" + human(seconds(p.suspendedSince)) + ")"]);
    if (p.shutdown) fields.push(["shutdown", esc(p.shutdown)]);
    if (p.activeDeadlineSeconds != null) fields.push(["deadline", human(p.activeDeadlineSeconds)]);
    if (p.retryRequest) fields.push(["last retry", esc(p.retryRequest)]);
    box.innerHTML = "<h1>" + esc(p.name) + '</h1><span class="field">' + esc(p.namespace) + "</span>" +
      fields.map(function (f) { return '<span class="field" data-field="' + f[0] + '">' + f[0] + " <b>" + f[1] + "</b></span>"; }).join("");
  }

  function actionButton(action, spec, flows, label) {
    var danger = action === "stop" || action === "terminate" ? " danger" : "";
    return '<button type="button" class="action' + danger + '" data-action="' + action + '" data-flows="' +
      esc((flows || []).join(",")) + '"' + (spec.enabled ? "" : ' disabled title="' + esc(spec.reason) + '"') +
      ">" + esc(label || action[0].toUpperCase() + action.slice(1)) + "</button>";
  }

  function renderToolbar() {
    var acts = state.page.actions, bar = document.getElementById("toolbar");
    var reasons = {};
    Object.keys(acts).forEach(function (a) { if (!acts[a].enabled) reasons[acts[a].reason] = true; });
    var rbac = Object.keys(reasons).filter(function (r) { return r.indexOf("RBAC") >= 0; });
    setHTML(bar, ["suspend", "resume", "stop", "terminate", "retry"].map(function (a) {
      return actionButton(a, acts[a]);
    }).join("") + (rbac.length ? '<span class="reason" id="rbac-reason">' + esc(rbac[0]) + "</span>" : ""));
  }

  function kv(pairs) {
    return '<dl class="kv">' + pairs.filter(function (p) { return p[1] !== "" && p[1] != null; }).map(function (p) {
      return "<dt>" + esc(p[0]) + "</dt><dd>" + p[1] + "</dd>";
    }).join("") + "</dl>";
  }

  function renderSide() {
    var side = document.getElementById("side"), p = state.page;
    if (!p || !state.selected || !side) return;
    var n = p.nodes.find(function (x) { return x.name === state.selected; });
    if (!n) return;
    var r = n.record, c = r.condition || {};
    var html = "<h2>" + esc(n.name) + "</h2>" + kv([
      ["phase", badge(n.phase)],
      n.jobs && n.jobs.length ? ["jobs", esc(n.jobs[0].job + " … " + n.jobs[n.jobs.length - 1].job)] : ["job", esc(n.job)],
      ["kind", n.finally ? "finally" : "flow"],
      ["depends on", esc(n.targets.join(", "))], ["rule", esc(n.rule)],
      ["continue on failure", n.continueOnFailure ? "yes" : ""],
      ["deadline", n.activeDeadlineSeconds != null ? human(n.activeDeadlineSeconds) : ""],
      ["duration", n.duration != null ? human(n.duration) : ""], ["restart count", String(r.restartCount)],
      ["condition", c.phase ? esc(c.phase) + (c.runningDuration ? " for " + esc(c.runningDuration) : "") : ""],
      ["created", esc(c.createTime || r.startTimestamp || "")]
    ]);
    if (["Failed", "Terminated", "Skipped", "Aborted"].indexOf(n.phase) >= 0 && !n.finally) {
      html += '<div class="toolbar">' + actionButton("retry", p.actions.retry, [n.name], "Retry this flow") + "</div>";
    }
    if (n.jobs && n.jobs.length) {
      // A matrix flow: its Jobs' counts by phase, and each Job.
      html += "<h3>Jobs</h3>" + kv(n.counts.map(function (c) { return [c[0], String(c[1])]; })) +
        table(["job", "phase", "duration", "restarts"], n.jobs.map(function (j) {
          return [j.job, j.phase, j.duration != null ? human(j.duration) : "", j.restarts != null ? String(j.restarts) : ""];
        }));
    }
    if (r.results && r.results.length) html += "<h3>Results</h3>" + resultsTable(r.results, n.jobs && n.jobs.length);
    html += "<h3>Running histories</h3>" + table(["state", "start", "end"], r.runningHistories.map(function (h) {
      return [h.state, h.startTimestamp, h.endTimestamp];
    }));
    if (c.taskStatusCount) html += "<h3>Tasks</h3><pre>" + esc(JSON.stringify(c.taskStatusCount, null, 1)) + "</pre>";
    html += "<h3>Job events</h3>" + eventsTable(r.events);
    setHTML(side, html);
  }

  // Results are a container's text: escaped (esc), each value wrapped and scrolled inside its cell,
  // so a 4 KiB value keeps the panel's width. A matrix flow's rows name their Job.
  function resultsTable(jobs, matrix) {
    var rows = [];
    jobs.forEach(function (j) {
      if (!j.results.length) rows.push([j.job, "", '<span class="muted">none valid</span>']);
      j.results.forEach(function (pair) { rows.push([j.job, esc(pair[0]), '<div class="value">' + esc(pair[1]) + "</div>"]); });
    });
    return '<table class="results-table"><thead><tr>' + (matrix ? "<th>job</th>" : "") + "<th>name</th><th>value</th></tr></thead><tbody>" +
      rows.map(function (row) {
        return "<tr>" + (matrix ? "<td>" + esc(row[0]) + "</td>" : "") + "<td>" + row[1] + "</td><td>" + row[2] + "</td></tr>";
      }).join("") + "</tbody></table>";
  }

  // The JobFlow's own results (status.results), once it has any.
  function renderOwnResults(results) {
    var box = document.getElementById("jobflow-results");
    if (!box) return;
    box.hidden = !results.length;
    setHTML(box, results.length ? "<h2>Results</h2>" + resultsTable([{
      job: "", results: results.map(function (r) { return [r.name, r.value]; })
    }], false) : "");
  }

  function table(headers, rows) {
    if (!rows.length) return '<p class="muted">none</p>';
    return "<table><thead><tr>" + headers.map(function (h) { return "<th>" + esc(h) + "</th>"; }).join("") +
      "</tr></thead><tbody>" + rows.map(function (row) {
        return "<tr>" + row.map(function (v) { return "<td>" + esc(v || "") + "</td>"; }).join("") + "</tr>";
      }).join("") + "</tbody></table>";
  }

  function eventsTable(events) {
    if (!events.length) return '<p class="muted">no events</p>';
    return "<table><thead><tr><th>Type</th><th>Reason</th><th>Age</th><th>Message</th></tr></thead><tbody>" +
      events.map(function (e) {
        return "<tr" + (e.type === "Warning" ? ' class="warning"' : "") + "><td>" + esc(e.type) + "</td><td>" +
          esc(e.reason) + (e.count > 1 ? " (x" + e.count + ")" : "") + "</td><td>" + human(seconds(e.last)) +
          "</td><td>" + esc(e.message) + "</td></tr>";
      }).join("") + "</tbody></table>";
  }

  function onZoom(e) {
    var button = e.target.closest("button[data-zoom]");
    if (!button) return;
    var how = button.getAttribute("data-zoom"), factor = state.factor || 1;
    state.zoom = how === "fit" ? "fit" : how === "in" ? Math.min(2, factor * 1.25) : how === "out" ? Math.max(0.2, factor / 1.25) : 1;
    state.factor = JobflowDag.zoom(document.getElementById("dag"), state.zoom);
  }

  // -- actions ------------------------------------------------------------------------------------
  function onAction(e) {
    var button = e.target.closest("button.action");
    if (!button || button.disabled || !state.page) return;
    var action = button.getAttribute("data-action");
    var flows = button.getAttribute("data-flows") ? button.getAttribute("data-flows").split(",") : [];
    var text = CONFIRM[action].replace("{key}", state.page.key)
      .replace("{flows}", flows.length ? "Flow " + flows.join(", ") + " runs" : "Every Failed and Skipped flow will");
    confirmThen(text, action, function () { send(action, flows); });
  }

  function confirmThen(text, action, then) {
    var dialog = document.getElementById("confirm"), ok = document.getElementById("confirm-ok");
    document.getElementById("confirm-text").textContent = text;
    ok.textContent = action[0].toUpperCase() + action.slice(1);
    ok.onclick = function () { dialog.close(); then(); };
    document.getElementById("confirm-cancel").onclick = function () { dialog.close(); };
    dialog.showModal();
  }

  function send(action, flows) {
    fetch("api/action", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ key: state.page.key, action: action, flows: flows })
    }).then(function (res) {
      return res.json().then(function (doc) { toast(doc.message || doc.error, !res.ok); });
    }).catch(function (err) { toast(String(err), true); });
  }

  function toast(text, error) {
    var box = document.getElementById("toast");
    box.textContent = text;
    box.className = "toast" + (error ? " error" : "");
    box.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(function () { box.hidden = true; }, 5000);
  }

  // -- routing ------------------------------------------------------------------------------------
  function route() {
    var m = /^#\/flow\/([^/]+)\/([^/]+)$/.exec(location.hash);
    if (m) showFlow(decodeURIComponent(m[1]), decodeURIComponent(m[2]));
    else showList();
  }

  window.addEventListener("hashchange", route);
  route();
})();
