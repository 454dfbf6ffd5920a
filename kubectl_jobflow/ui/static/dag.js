// Draws a JobFlow's DAG as SVG. The layout (boxes and edge polylines) comes computed from the
// server (kubectl_jobflow/ui/layout.py); this file only turns it into markup, and on a later
// update of the same shape only recolours the nodes, which is what changes as Jobs run.
"use strict";

window.JobflowDag = (function () {
  var NODE_W = 172, NODE_H = 40, NAME_CHARS = 24;

  // A JobFlow that declares results has taller boxes (kubectl_jobflow/ui/results_view.py).
  function nodeHeight(page) {
    return page.drawing.nodeHeight || NODE_H;
  }

  function esc(text) {
    return String(text == null ? "" : text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  function short(name) {
    return name.length > NAME_CHARS ? name.slice(0, NAME_CHARS - 1) + "…" : name;
  }

  function stateText(node) {
    var text = node.phase;
    if (node.jobs && node.jobs.length) {
      // A matrix flow: how many of its Jobs completed.
      var done = (node.counts || []).filter(function (c) { return c[0] === "Completed"; });
      text += " · " + (done.length ? done[0][1] : 0) + "/" + node.jobs.length;
    }
    if (node.restarts) text += " · " + node.restarts + (node.restarts === 1 ? " restart" : " restarts");
    return text;
  }

  // The shape of a page: the drawing is redone only when it changes.
  function shapeKey(page) {
    var d = page.drawing;
    return page.key + "|" + d.width + "x" + d.height + "|" + Object.keys(d.boxes).join(",") + "|" + d.edges.length;
  }

  function edgeMarkup(edge, straight) {
    var pts = edge.points.map(function (p) { return p[0] + "," + p[1]; }).join(" ");
    var out = '<polyline class="edge' + (straight ? " straight" : "") + '" marker-end="url(#arrow)" points="' + pts + '"/>';
    if (edge.label) {
      var a = edge.points[edge.points.length - 2], b = edge.points[edge.points.length - 1];
      // Near the flow the rule belongs to, on the last stretch of the edge.
      var x = a[0] + (b[0] - a[0]) * 0.6, y = a[1] + (b[1] - a[1]) * 0.6 - 4;
      out += '<text class="edge-label" text-anchor="middle" x="' + x + '" y="' + y + '">' + esc(edge.label) + "</text>";
    }
    return out;
  }

  // The results line (already escaped of control characters and cut to its width by the server).
  function resultsMarkup(node, height) {
    if (height <= NODE_H) return "";
    return '<text class="results" x="8" y="48">' + esc(node.results || "") + "</text>";
  }

  function nodeMarkup(node, box, height) {
    return '<g class="node' + (node.finally ? " final" : "") + '" data-flow="' + esc(node.name) +
      '" data-phase="' + esc(node.phase) + '" transform="translate(' + box[0] + "," + box[1] + ')">' +
      "<title>" + esc(node.name) + " (" + esc(node.job) + ")</title>" +
      '<rect rx="6" width="' + NODE_W + '" height="' + height + '" class="ph-' + esc(node.phase) + '"/>' +
      '<text class="name" x="8" y="16">' + esc(short(node.name)) + "</text>" +
      '<text class="state" x="8" y="32">' + esc(stateText(node)) + "</text>" + resultsMarkup(node, height) + "</g>";
  }

  function finallyMarkup(page) {
    var finals = page.nodes.filter(function (n) { return n.finally; });
    if (!finals.length) return "";
    var boxes = finals.map(function (n) { return page.drawing.boxes[n.name]; });
    var x = boxes[0][0] - 10, top = Math.min.apply(null, boxes.map(function (b) { return b[1]; }));
    var bottom = Math.max.apply(null, boxes.map(function (b) { return b[1]; })) + nodeHeight(page);
    return '<rect class="finally-box" rx="8" x="' + x + '" y="' + (top - 20) + '" width="' + (NODE_W + 20) +
      '" height="' + (bottom - top + 28) + '"/>' +
      '<text class="finally-title" x="' + (x + 8) + '" y="' + (top - 6) + '">finally</text>';
  }

  // Said above a DAG too large to route (layout.py's STRAIGHT mode): every flow is still drawn.
  function note(d) {
    return '<p class="dag-note" id="dag-note">Too many dependencies to route around the boxes: long ones are drawn ' +
      "straight" + (d.omittedEdges ? ", and " + d.omittedEdges + " are not drawn" : "") +
      ". Click a flow to see what it depends on.</p>";
  }

  // Draws the whole SVG into `container`; returns the milliseconds it took, layout included.
  function draw(container, page) {
    var start = performance.now();
    var d = page.drawing, finals = page.nodes.some(function (n) { return n.finally; });
    var top = finals ? 24 : 0, parts = [];
    parts.push('<svg class="graph" xmlns="http://www.w3.org/2000/svg" width="' + d.width + '" height="' +
      (d.height + top) + '" viewBox="0 0 ' + d.width + " " + (d.height + top) + '" data-width="' + d.width +
      '" data-height="' + (d.height + top) + '"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" ' +
      'markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="#8c959f"/></marker></defs>' +
      '<g transform="translate(0,' + top + ')">');
    parts.push(finallyMarkup(page));
    var straight = d.mode === "straight";
    for (var i = 0; i < d.edges.length; i++) parts.push(edgeMarkup(d.edges[i], straight));
    for (var j = 0; j < page.nodes.length; j++) {
      var node = page.nodes[j], box = d.boxes[node.name];
      if (box) parts.push(nodeMarkup(node, box, nodeHeight(page)));
    }
    parts.push("</g></svg>");
    container.innerHTML = (straight ? note(d) : "") + parts.join("");
    container.dataset.shape = shapeKey(page);
    container.getBoundingClientRect(); // force style and layout, so the time is the real cost
    var took = performance.now() - start;
    container.dataset.renderMs = took.toFixed(1);
    return took;
  }

  // Recolours the nodes of an SVG already drawn for the same shape.
  function recolour(container, page) {
    var byName = {};
    container.querySelectorAll("g.node").forEach(function (g) { byName[g.getAttribute("data-flow")] = g; });
    page.nodes.forEach(function (node) {
      var g = byName[node.name];
      var line = g && g.querySelector("text.results");
      if (line && line.textContent !== (node.results || "")) line.textContent = node.results || "";
      if (!g || g.getAttribute("data-phase") === node.phase && g.dataset.state === stateText(node)) return;
      g.setAttribute("data-phase", node.phase);
      g.dataset.restarts = String(node.restarts);
      g.dataset.state = stateText(node);
      g.querySelector("rect").setAttribute("class", "ph-" + node.phase);
      g.querySelector("text.state").textContent = stateText(node);
    });
  }

  // Draws or recolours, whichever the page needs; returns the draw time, or null for a recolour.
  function render(container, page) {
    if (container.dataset.shape === shapeKey(page)) {
      recolour(container, page);
      return null;
    }
    return draw(container, page);
  }

  // Scales the drawing: a number, or "fit" (the container's width, never below MIN_FIT nor above 1).
  var MIN_FIT = 0.4;
  function zoom(container, how) {
    var svg = container.querySelector("svg");
    if (!svg) return 1;
    var w = Number(svg.getAttribute("data-width")), h = Number(svg.getAttribute("data-height"));
    var factor = how === "fit" ? Math.max(MIN_FIT, Math.min(1, (container.clientWidth - 4) / w)) : how;
    svg.setAttribute("width", Math.round(w * factor));
    svg.setAttribute("height", Math.round(h * factor));
    return factor;
  }

  function select(container, name) {
    container.querySelectorAll("g.node.selected").forEach(function (g) { g.classList.remove("selected"); });
    container.querySelectorAll("g.node").forEach(function (g) {
      if (g.getAttribute("data-flow") === name) g.classList.add("selected");
    });
  }

  return { draw: draw, render: render, select: select, zoom: zoom, esc: esc };
})();
