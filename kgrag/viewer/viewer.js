// kgrag trace viewer: draws the precomputed layout as SVG; click a node for its details.
// Every text is set with textContent (document text is untrusted).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("kgrag-data").textContent);
  var layout = data.layout, trace = data.trace;
  var SVG = "http://www.w3.org/2000/svg";
  var COLOURS = { query: "#dbe9ff", plan: "#e8e0ff", step: "#ffffff", evidence: "#fff4d6",
    answer: "#dff5e1" };
  var STATUS = { ok: "#2e7d32", skipped: "#9e9e9e", error: "#c62828" };
  var byId = {};
  layout.nodes.forEach(function (n) { byId[n.id] = n; });
  var W = layout.node_w, H = layout.node_h;

  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (parent) parent.appendChild(e);
    return e;
  }
  function h(tag, text, parent) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (parent) parent.appendChild(e);
    return e;
  }

  var svg = el("svg", { width: layout.width, height: layout.height, id: "trace-graph",
    viewBox: "0 0 " + layout.width + " " + layout.height });
  var defs = el("defs", {}, svg);
  var marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
    markerWidth: 8, markerHeight: 8, markerUnits: "userSpaceOnUse",
    orient: "auto-start-reverse" }, defs);
  el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#9aa3b2" }, marker);
  var edgeLayer = el("g", { "class": "edges" }, svg);
  var nodeLayer = el("g", { "class": "nodes" }, svg);

  layout.edges.forEach(function (e) {
    var a = byId[e.source], b = byId[e.target];
    if (!a || !b) return;
    var down = b.y >= a.y;
    var x1 = a.x + W / 2, y1 = down ? a.y + H : a.y;
    var x2 = b.x + W / 2, y2 = down ? b.y : b.y + H;
    if (a.y === b.y) { y1 = a.y + H / 2; y2 = b.y + H / 2; x1 = a.x + W; x2 = b.x; }
    var my = (y1 + y2) / 2;
    var d = "M" + x1 + "," + y1 + " C" + x1 + "," + my + " " + x2 + "," + my + " " + x2 + "," + y2;
    if (e.type === "ANSWERED_BY") {
      // query to answer spans every layer: route it along the right-hand side
      var side = layout.width - 8;
      x1 = a.x + W; y1 = a.y + H / 2; x2 = b.x + W; y2 = b.y + H / 2; my = (y1 + y2) / 2;
      d = "M" + x1 + "," + y1 + " C" + side + "," + y1 + " " + side + "," + y2 + " " + x2 + "," + y2;
    }
    var path = el("path", { "class": "edge " + e.type, "marker-end": "url(#arrow)",
      "data-s": e.source, "data-t": e.target, d: d }, edgeLayer);
    var title = el("title", {}, path);
    title.textContent = e.type + (e.label ? " " + e.label : "");
    if (e.label) {
      var t = el("text", { "class": "elabel", x: (x1 + x2) / 2 + 3, y: my }, edgeLayer);
      t.textContent = e.label;
    }
  });

  layout.nodes.forEach(function (n) {
    var g = el("g", { "class": "node " + n.kind, "data-id": n.id, tabindex: 0,
      transform: "translate(" + n.x + "," + n.y + ")" }, nodeLayer);
    var stroke = (n.kind === "step" && STATUS[n.status]) || "#7a8699";
    var rect = el("rect", { width: W, height: H, rx: 8, ry: 8, fill: COLOURS[n.kind] || "#fff",
      stroke: stroke }, g);
    if (n.status === "skipped") rect.setAttribute("stroke-dasharray", "5 3");
    var t1 = el("text", { x: 10, y: 19, "font-weight": 600 }, g);
    t1.textContent = n.label;
    var t2 = el("text", { x: 10, y: 37, fill: "#445" }, g);
    t2.textContent = n.caption;
    var tt = el("title", {}, g);
    tt.textContent = n.label + ": " + n.caption;
    g.addEventListener("click", function () { select(n.id); });
    g.addEventListener("keydown", function (ev) { if (ev.key === "Enter") select(n.id); });
  });
  document.getElementById("graph").appendChild(svg);

  function dl(pairs, parent) {
    var d = h("dl", null, parent);
    pairs.forEach(function (p) {
      if (p[1] === undefined || p[1] === null || p[1] === "") return;
      h("dt", p[0], d);
      h("dd", p[1], d);
    });
    return d;
  }
  function pre(title, value, parent) {
    if (value === undefined || value === null || value === "") return;
    h("h3", title, parent);
    h("pre", typeof value === "string" ? value : JSON.stringify(value, null, 2), parent);
  }
  function stepById(id) {
    for (var i = 0; i < trace.steps.length; i++) {
      if (String(trace.steps[i].step_id) === String(id)) return trace.steps[i];
    }
    return null;
  }

  function select(id) {
    var n = byId[id];
    var panel = document.getElementById("details");
    while (panel.firstChild) panel.removeChild(panel.firstChild);
    Array.prototype.forEach.call(document.querySelectorAll("svg .node"), function (g) {
      g.classList.toggle("selected", g.getAttribute("data-id") === id);
    });
    Array.prototype.forEach.call(document.querySelectorAll("svg .edge"), function (p) {
      p.classList.toggle("hl", p.getAttribute("data-s") === id || p.getAttribute("data-t") === id);
    });
    if (!n) return;
    var q = trace.query || {}, a = trace.answer || {}, p = trace.plan || {};
    if (n.kind === "query") {
      h("h2", "Query " + q.id, panel);
      dl([["question", q.text], ["user", q.user], ["asked", q.created_at],
        ["planner", q.planner], ["exit reason", q.exit_reason], ["iterations", q.iterations],
        ["latency (ms)", q.latency_ms], ["cost", q.cost]], panel);
    } else if (n.kind === "plan") {
      h("h2", "Plan " + p.id, panel);
      dl([["source", p.source], ["fallback reason", p.fallback_reason]], panel);
      pre("plan JSON", p.json, panel);
    } else if (n.kind === "step") {
      var s = stepById(n.ref) || {};
      h("h2", "Step " + s.step_id + ": " + s.type, panel);
      dl([["status", s.status], ["modality", s.modality],
        ["duration (ms)", s.duration_ms], ["results", s.result_count],
        ["depends on", (s.dependencies || []).join(", ")], ["condition", s.condition],
        ["why", s.explanation], ["error / skip reason", s.error]], panel);
      pre("Cypher", s.cypher, panel);
      pre("parameters", s.parameters, panel);
      if (s.cypher_parameters && s.cypher_parameters.length) {
        pre("Cypher parameters", s.cypher_parameters, panel);
      }
      h("h3", "returned evidence (" + (s.returned || []).length + ")", panel);
      var ol = h("ol", null, panel);
      (s.returned || []).forEach(function (r) {
        var li = h("li", null, ol);
        h("b", "#" + r.rank + " " + r.kind + " ", li);
        h("span", "score " + (typeof r.score === "number" ? r.score.toFixed(3) : r.score), li);
        h("div", r.id, li);
        if (r.text) h("div", r.text, li);
      });
    } else if (n.kind === "evidence") {
      h("h2", n.label + " " + n.ref, panel);
      var ul = h("ul", null, panel), text = null;
      trace.steps.forEach(function (st) {
        (st.returned || []).forEach(function (r) {
          if (r.id === n.ref) {
            h("li", "step " + st.step_id + " (" + st.type + ") rank " + r.rank + ", score " +
              (typeof r.score === "number" ? r.score.toFixed(3) : r.score), ul);
            if (!text && r.text) text = r.text;
          }
        });
      });
      (a.citations || []).forEach(function (c) {
        if (c.node_id === n.ref) h("p", "cited by the answer as [" + c.marker + "]", panel);
      });
      pre("text", text, panel);
    } else if (n.kind === "answer") {
      h("h2", "Answer", panel);
      dl([["mode", a.mode], ["verdict", a.verdict], ["groundedness", a.groundedness]], panel);
      pre("text", a.text, panel);
      var cl = h("ol", null, panel);
      (a.citations || []).forEach(function (c) {
        h("li", "[" + c.marker + "] " + c.label + " " + c.node_id, cl);
      });
    }
  }
  // a link to viewer.html#step:3 opens with that node's details
  function fromHash() {
    var wanted = decodeURIComponent(location.hash.replace(/^#/, ""));
    select(byId[wanted] ? wanted : "query");
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();
  document.body.setAttribute("data-rendered", String(layout.nodes.length));
})();
