// The yarn-am status page: polls the AM's JSON API with relative URLs (the RM's web proxy buffers
// streamed responses, so polling is what works everywhere) and draws two pictures from the status
// document: the device map (which TaskExecutor holds which GPU on which node) and the timeline (where
// each container's time went). No secret is ever used or shown here: the page only reads. Nothing is
// parsed as HTML (textContent and attributes only), and no style attribute is written: the page runs
// under a Content-Security-Policy without 'unsafe-inline' (docs/design.md#security).
"use strict";
(function () {
  var lastEvent = 0;
  var maxEvents = 50;
  var pollMs = 2000;
  var maxBars = 300;
  var maxGPURows = 64; // GPU utilisation rows under the timeline's bars: the newest containers' GPUs, as many as carry a history (contract.MaxHistoryGPUs)
  var idlePercent = 5; // a GPU under this is idle (docs/running.md#gpu-utilisation: the idle share, idle-gpu)
  var maxDiag = 160; // characters of a container's exit diagnostics shown in the table // timeline rows drawn: the newest containers
  // The SVG namespace, taken from the page's own <svg> (which the HTML parser puts in it).
  var SVG = document.getElementById("timeline").namespaceURI;

  function text(el, s) { el.textContent = s == null ? "" : String(s); }
  function byId(id) { return document.getElementById(id); }
  function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); }
  function el(tag, cls, parent) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (parent) parent.appendChild(e);
    return e;
  }
  function svg(tag, attrs, parent) {
    var e = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (parent) parent.appendChild(e);
    return e;
  }
  function cap(c) {
    if (!c) return "";
    return Object.keys(c).sort().map(function (k) { return k + "=" + c[k]; }).join(" ");
  }
  function infoMain(list) {
    return (list || []).map(function (i) {
      if (i.index !== undefined) return i.index;
      return Object.keys(i).sort().map(function (k) { return k + "=" + i[k]; }).join(" ");
    }).join(",");
  }
  function cell(tr, value, cls) {
    var td = document.createElement("td");
    if (cls) td.className = cls;
    text(td, value);
    tr.appendChild(td);
    return td;
  }
  // shortID: the part of a container id that tells the containers of one application apart
  // (container_e01_1700000000000_0001_01_000002 → 01_000002).
  function shortID(id) {
    var p = String(id || "").split("_");
    return p.length >= 2 ? p.slice(-2).join("_") : String(id);
  }
  // nodeLabel: the node's host, or host:port where several nodes share a host (as in a mini cluster).
  var sharedHosts = {};
  function host(node) { return String(node || "").replace(/:\d+$/, ""); }
  function nodeLabel(node) { return sharedHosts[host(node)] ? String(node) : host(node); }
  function noteHosts(s) {
    var seen = {};
    sharedHosts = {};
    (s.nodes || []).map(function (n) { return n.node; }).concat((s.containers || []).map(function (c) { return c.node; }))
      .forEach(function (n) {
        var h = host(n);
        if (seen[h] && seen[h] !== n) sharedHosts[h] = true;
        seen[h] = n;
      });
  }
  function ms(t) { if (!t) return null; var v = Date.parse(t); return isNaN(v) ? null : v; }
  function dur(d) {
    if (d == null || d < 0) return "–";
    var s = Math.round(d / 1000);
    if (s < 60) return s + "s";
    var m = Math.floor(s / 60); s %= 60;
    if (m < 60) return m + "m" + (s < 10 ? "0" : "") + s + "s";
    var h = Math.floor(m / 60); m %= 60;
    return h + "h" + (m < 10 ? "0" : "") + m + "m";
  }
  function active(ct) { return ct.state !== "COMPLETED"; }

  // How a container ended, in four groups the timeline colours: ok (exit 0), fail (counts against
  // taskexecutor.max-failures), lost (YARN took it: preemption, node or disks lost, killed by the
  // RM), stopped (the AM stopped it: scaling down or finishing).
  var endGroup = {
    "succeeded": "ok",
    "preempted": "lost", "aborted": "lost", "disks-failed": "lost", "killed-by-rm": "lost",
    "killed-by-scheduler": "lost", "killed-after-finish": "lost",
    "killed-by-am": "stopped"
  };
  function endOf(ct) { return endGroup[ct.exitClass] || "fail"; }

  // ---- the summary and the tables ----

  function renderSummary(s) {
    text(byId("app"), s.app);
    var st = byId("state");
    text(st, s.state);
    st.className = "state " + s.state;
    var req = s.requirement || {};
    var c = s.counts || {};
    text(byId("required"), req.instances);
    text(byId("running"), c.running);
    text(byId("pending"), c.requested);
    text(byId("allocated"), c.allocated);
    text(byId("completed"), c.completed);
    text(byId("failed"), c.failed);
    text(byId("profile"), cap(req.resources));
    text(byId("diagnostics"), s.diagnostics || "");
    // Gang mode (docs/running.md#gang-mode-distributed-training): the round, its size (WORLD_SIZE)
    // and, for an elastic gang, the bounds and the containers held to grow with.
    var g = s.gang;
    byId("gang-card").hidden = !g;
    if (g) {
      var gs = "round " + g.round + ": " + (g.formed ? "running at " + g.size : "forming, " + g.held + " held");
      if (g.minInstances !== g.maxInstances) {
        gs += " (elastic " + g.minInstances + "–" + g.maxInstances + (g.formed && g.held ? ", " + g.held + " held to grow" : "") + ")";
      }
      text(byId("gang"), gs);
    }
    // The framework's pages (a Flink job's web UI, docs/flink.md#the-web-ui); only an http(s) URL
    // becomes a link, and a link's text is set as text, never as markup.
    var links = byId("links");
    clear(links);
    (s.links || []).forEach(function (l) {
      if (!/^https?:\/\/[^\s]+$/.test(l.url || "")) return;
      var a = document.createElement("a");
      a.href = l.url;
      a.target = "_blank";
      a.rel = "noopener noreferrer";
      a.className = "framework-link";
      a.title = (l.note ? l.note + ": " : "") + l.url;
      text(a, " · " + (l.name || l.url));
      links.appendChild(a);
    });
    // What the job's framework says of its work (a Flink job's state, parallelism, checkpoints;
    // docs/flink.md#status-and-events): names and values are set as text, never as markup.
    var fw = byId("framework");
    clear(fw);
    var f = s.framework;
    if (f && ((f.details || []).length || f.error)) {
      var head = document.createElement("strong");
      text(head, (f.title || "framework") + ": ");
      fw.appendChild(head);
      (f.details || []).forEach(function (d, i) {
        var span = document.createElement("span");
        text(span, (i ? " · " : "") + d.name + " " + d.value);
        fw.appendChild(span);
      });
      if (f.error) {
        var err = document.createElement("span");
        text(err, " (not readable: " + f.error + ")");
        fw.appendChild(err);
      }
    }
    renderSeries(f);
  }

  // The framework's values over time (a Flink job's parallelism per vertex, decisions and what it
  // ran at; docs/flink.md#autoscaling): a small table each, newest first, set as text.
  function renderSeries(f) {
    var box = byId("framework-series");
    clear(box);
    ((f && f.series) || []).forEach(function (sr) {
      var pts = sr.points || [];
      if (!pts.length) return;
      var table = el("table", "fw-series", box);
      table.setAttribute("data-series", sr.name);
      text(el("caption", "", table), sr.name + ": " + pts.map(function (p) { return p.value; }).join(" → "));
      var head = el("tr", "", el("thead", "", table));
      ["time", "value", "what"].forEach(function (h) { text(el("th", "", head), h); });
      var body = el("tbody", "", table);
      pts.slice().reverse().forEach(function (p) {
        var tr = el("tr", "", body);
        cell(tr, clock(p.at), "at");
        cell(tr, p.value, "value");
        cell(tr, p.note || "", "note");
      });
    });
  }

  function renderTable(s) {
    var body = document.querySelector("#containers tbody");
    clear(body);
    (s.containers || []).forEach(function (ct) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-row", ct.id);
      cell(tr, ct.id, "id");
      cell(tr, ct.node, "node");
      cell(tr, cap(ct.resources), "resources");
      var infos = ct.infos || {};
      cell(tr, infoMain(infos.gpu), "gpu");
      cell(tr, Object.keys(infos).filter(function (k) { return k !== "gpu"; }).sort()
        .map(function (k) { return k + ": " + infoMain(infos[k]); }).join("; "), "devices");
      // A preemption warning (docs/running.md#preemption): when the AM expects the kill.
      var sc = cell(tr, ct.state + (ct.preemptionDeadline ? " · preempted by " + clock(ct.preemptionDeadline) : ""), "cstate");
      if (ct.preemptionDeadline) sc.className += " preempting";
      var exit = "";
      if (ct.exitStatus !== undefined && ct.exitStatus !== null) exit = ct.exitStatus + " " + (ct.exitClass || "");
      if (ct.stderrTail) {
        // The worker's own last stderr lines (docs/running.md#the-workers-own-error): their end says
        // most, so the cell shows the end and the tooltip all of them. Text only (cell sets textContent).
        var tail = ct.stderrTail.length > maxDiag ? "… " + ct.stderrTail.slice(-maxDiag) : ct.stderrTail;
        var tc = cell(tr, exit + (exit ? ": " : "") + tail, "exit");
        tc.title = exit + "\n" + ct.stderrTail;
        body.appendChild(tr);
        return;
      }
      if (ct.diagnostics) exit += (exit ? ": " : "") + ct.diagnostics;
      // The NodeManager's diagnostics run to kilobytes of log tail: the cell shows the start, the
      // tooltip and /api/v1/containers the rest.
      var td = cell(tr, exit.length > maxDiag ? exit.slice(0, maxDiag) + " …" : exit, "exit");
      if (exit.length > maxDiag) td.title = exit;
      body.appendChild(tr);
    });
  }

  // ---- the device map ----

  // deviceTypes: the external resources to draw, name → YARN type (gpu → yarn.io/gpu).
  function deviceTypes(s) {
    var ext = (s.requirement || {}).externalResources || {};
    var out = {};
    Object.keys(ext).forEach(function (n) { out[n] = ext[n]; });
    (s.containers || []).forEach(function (ct) {
      Object.keys(ct.infos || {}).forEach(function (n) { if (!out[n]) out[n] = "yarn.io/" + n; });
    });
    return out;
  }

  // mapRows builds one row per node for resource name/type: the devices the job's active containers
  // hold (by the index their launcher reported), the ones held without a report yet, and the node's
  // other devices, free or (by the node report's use) held by other applications.
  function mapRows(s, name, type) {
    var rows = {};
    function row(node) {
      if (!rows[node]) rows[node] = { node: node, total: null, used: null, held: {}, unreported: [], topo: null };
      return rows[node];
    }
    (s.nodes || []).forEach(function (n) {
      var total = (n.capability || {})[type] || 0;
      if (total <= 0) return;
      var r = row(n.node);
      r.total = total;
      r.used = (n.used || {})[type] || 0;
    });
    (s.containers || []).forEach(function (ct) {
      if (!active(ct)) return;
      var infos = (ct.infos || {})[name];
      if (infos && infos.length) {
        var r = row(ct.node);
        // The node's GPU topology as the newest of its containers whose launcher read one reported it
        // (docs/gpus.md#topology-connected-sets): the same matrix whoever read it.
        var topo = (ct.topology || {})[name];
        if (topo && topo.gpus && topo.gpus.length) r.topo = topo;
        infos.forEach(function (i, k) {
          var idx = i.index !== undefined ? String(i.index) : "#" + k;
          r.held[idx] = ct;
        });
      } else if (((ct.resources || {})[type] || 0) > 0) {
        var n = ct.resources[type];
        for (var k = 0; k < n; k++) row(ct.node).unreported.push(ct);
      }
    });
    return Object.keys(rows).sort().map(function (k) {
      var r = rows[k];
      var cells = [];
      var held = Object.keys(r.held);
      var ours = held.length + r.unreported.length;
      var known = {};
      // Without a node report the node's other devices are unknown: only the held ones are drawn.
      for (var i = 0; i < (r.total || 0); i++) {
        var idx = String(i);
        known[idx] = true;
        cells.push({ gpu: idx, ct: r.held[idx] || null });
      }
      held.filter(function (idx) { return !known[idx]; }).sort(function (a, b) {
        var na = parseInt(a, 10), nb = parseInt(b, 10);
        return isNaN(na) || isNaN(nb) ? (a < b ? -1 : 1) : na - nb;
      }).forEach(function (idx) {
        cells.push({ gpu: idx, ct: r.held[idx] });
      });
      // Devices held by a container whose launcher has not reported yet take the first free cells;
      // the index is not known, so the cell says so.
      r.unreported.forEach(function (ct) {
        for (var j = 0; j < cells.length; j++) {
          if (!cells[j].ct && !cells[j].unknown) { cells[j] = { gpu: "", ct: ct, unknown: true }; return; }
        }
        cells.push({ gpu: "", ct: ct, unknown: true });
      });
      // The node report counts every application's use; what exceeds ours is someone else's (which
      // indexes, YARN does not say: the last free cells are marked).
      var others = r.used == null ? 0 : Math.max(0, r.used - ours);
      for (var j = cells.length - 1; j >= 0 && others > 0; j--) {
        if (!cells[j].ct && !cells[j].other) { cells[j].other = true; others--; }
      }
      var free = cells.filter(function (c) { return !c.ct && !c.other; }).length;
      return { node: r.node, cells: cells, ours: ours, free: free, total: r.total, topo: r.topo, held: r.held };
    });
  }

  // linkClass: the kind of a link of nvidia-smi topo -m, for its colour: nv (NVLink, NVSwitch), pcie
  // (PIX, PXB: PCIe switches), host (PHB, NODE: through a host bridge), sys (SYS: across NUMA nodes),
  // self (X).
  function linkClass(l) {
    l = String(l || "");
    if (/^NV\d+$/.test(l)) return "nv";
    if (l === "PIX" || l === "PXB") return "pcie";
    if (l === "PHB" || l === "NODE") return "host";
    if (l === "X") return "self";
    return "sys";
  }

  // drawLinks: the node's GPU topology as a matrix beside its cells: each pair's link, coloured by
  // kind, and the pairs of one container's set marked (in-set), each GPU's row named by its holder.
  function drawLinks(line, name, r) {
    var gpus = r.topo.gpus.slice(0, 64);
    var t = el("table", "gpu-links", line);
    t.setAttribute("data-resource", name);
    t.setAttribute("data-node", r.node);
    text(el("caption", "", t), "links (nvidia-smi topo -m)");
    var head = el("tr", "", t);
    el("th", "", head);
    gpus.forEach(function (g) { text(el("th", "", head), String(g.index)); });
    text(el("th", "", head), "NUMA");
    gpus.forEach(function (g, i) {
      var tr = el("tr", "", t);
      var holder = r.held[String(g.index)] || null;
      var th = el("th", holder ? "held" : "", tr);
      text(th, "GPU " + g.index);
      th.setAttribute("data-container", holder ? holder.id : "");
      th.title = holder ? "held by " + holder.id : "not held by this application";
      (g.links || []).slice(0, gpus.length).forEach(function (l, j) {
        var other = r.held[String(gpus[j].index)] || null;
        var inSet = i !== j && holder && other === holder;
        var td = cell(tr, l === "X" ? "·" : l, "link link-" + linkClass(l) + (inSet ? " in-set" : ""));
        td.setAttribute("data-pair", g.index + "-" + gpus[j].index);
        td.title = "GPU " + g.index + " ↔ GPU " + gpus[j].index + ": " + l + (inSet ? " (one set: " + holder.id + ")" : "");
      });
      cell(tr, g.numa, "numa");
    });
  }

  function renderMap(s) {
    var root = byId("gpumap");
    clear(root);
    var types = deviceTypes(s);
    var names = Object.keys(types).sort(function (a, b) { return (a === "gpu" ? "" : a) < (b === "gpu" ? "" : b) ? -1 : 1; });
    var drawn = 0;
    names.forEach(function (name) {
      var type = types[name];
      var rows = mapRows(s, name, type);
      if (!rows.length) return;
      var block = el("div", "devblock", root);
      block.setAttribute("data-resource", name);
      text(el("div", "devtitle", block), name + " (" + type + ")");
      rows.forEach(function (r) {
        var line = el("div", "devrow", block);
        line.setAttribute("data-node", r.node);
        var head = el("div", "devnode", line);
        text(el("div", "nodename", head), r.node);
        text(el("div", "nodesum", head), r.ours + " held · " + r.free + " free" + (r.total == null ? " · total unknown" : " of " + r.total));
        var cells = el("div", "devcells", line);
        r.cells.forEach(function (c) {
          var state = c.ct ? c.ct.state.toLowerCase() : (c.other ? "other" : "free");
          var d = el("div", "gpu-cell cell-" + state, cells);
          d.setAttribute("data-resource", name);
          d.setAttribute("data-node", r.node);
          d.setAttribute("data-gpu", c.gpu);
          d.setAttribute("data-container", c.ct ? c.ct.id : "");
          d.setAttribute("data-state", state);
          text(el("div", "gpu-index", d), name.toUpperCase() + " " + (c.unknown ? "?" : c.gpu));
          text(el("div", "gpu-owner", d), c.ct ? shortID(c.ct.id) : (c.other ? "other app" : "free"));
          d.title = c.ct ? c.ct.id + " (" + c.ct.state + (c.unknown ? ", index not reported yet" : "") + ")" :
            (c.other ? "held by another application (YARN does not say which index)" : "free");
          var set = c.ct && !c.unknown ? ((c.ct.topology || {})[name] || null) : null;
          if (set && set.link) {
            // The set this GPU belongs to, and how its GPUs are linked (worse than the node's best: said).
            d.setAttribute("data-set-link", set.link);
            var st = el("div", "gpu-set link-" + linkClass(set.link), d);
            text(st, "set " + set.link + (set.best ? " (best " + set.best + ")" : ""));
            d.title += " · its set is linked by " + set.link + " at worst" + (set.best ? ", the node's best by " + set.best : "");
          }
        });
        if (r.topo) drawLinks(line, name, r);
        drawn++;
      });
    });
    if (!drawn) text(el("p", "empty", root), "No device is held or known yet.");
    text(byId("map-note"), s.nodesAt ? "node capacities as of " + clock(s.nodesAt) :
      "node capacities unknown (no node report): only the devices held are shown");
  }

  // ---- the timeline ----

  function clock(t) { return String(t || "").replace("T", " ").replace(/\.\d*/, "").replace(/Z$/, " UTC"); }

  var tickSteps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
  function tickLabel(sec) {
    if (sec < 60) return "+" + sec + "s";
    if (sec < 3600) return "+" + Math.floor(sec / 60) + "m" + (sec % 60 ? (sec % 60) + "s" : "");
    return "+" + Math.floor(sec / 3600) + "h" + (sec % 3600 ? Math.floor((sec % 3600) / 60) + "m" : "");
  }

  function renderTimeline(s) {
    var root = byId("timeline");
    clear(root);
    var now = ms(s.now) || Date.now();
    var cts = (s.containers || []).slice(-maxBars);
    // From the first time drawn (a long-running AM's start would squeeze its latest containers
    // into the right edge); from the AM's start when nothing has a time yet or a container was
    // adopted from an earlier attempt.
    var t0 = null;
    function earlier(t) { var v = ms(t); if (v != null && (t0 == null || v < t0)) t0 = v; }
    cts.forEach(function (ct) {
      if (!ct.allocatedAt) earlier(s.started);
      [ct.requestedAt, ct.allocatedAt, ct.launchedAt, ct.finishedAt].forEach(earlier);
    });
    (s.asks || []).forEach(function (a) { earlier(a.since); });
    if (t0 == null) t0 = ms(s.started) || now;
    var span = Math.max(now - t0, 1000);

    var wrap = byId("timeline-wrap");
    var width = Math.max(600, (wrap.clientWidth || 1200) - 2);
    var labelW = 230, rightW = 130, top = 22, rowH = 18, gap = 4, gpuH = 26;
    var plotW = width - labelW - rightW;
    function x(t) { return labelW + Math.max(0, Math.min(1, (t - t0) / span)) * plotW; }
    var rows = cts.length + (s.asks || []).length;
    var gpuRows = gpuRowCounts(cts);
    var height = top + Math.max(rows, 1) * (rowH + gap) + gpuRows.drawn * (gpuH + gap) + 4;
    root.setAttribute("width", width);
    root.setAttribute("height", height);
    root.setAttribute("viewBox", "0 0 " + width + " " + height);

    // Axis: about eight ticks of a round step, measured from the first request.
    var step = tickSteps[tickSteps.length - 1];
    for (var i = 0; i < tickSteps.length; i++) { if (span / 1000 / tickSteps[i] <= 8) { step = tickSteps[i]; break; } }
    for (var sec = 0; sec * 1000 <= span; sec += step) {
      var tx = x(t0 + sec * 1000);
      svg("line", { x1: tx, x2: tx, y1: top - 4, y2: height, "class": "grid" }, root);
      text(svg("text", { x: tx, y: 12, "class": "tick" }, root), tickLabel(sec));
    }
    svg("line", { x1: x(now), x2: x(now), y1: top - 4, y2: height, "class": "now" }, root);

    var pending = 0, launching = 0, running = 0;
    var y = top;
    function bar(g, from, to, cls, tip) {
      if (from == null || to == null || to < from) return;
      var r = svg("rect", { x: x(from), y: y, width: Math.max(1, x(to) - x(from)), height: rowH, "class": "seg " + cls }, g);
      text(svg("title", {}, r), tip);
    }
    cts.forEach(function (ct) {
      var g = svg("g", { "class": "bar", "data-container": ct.id, "data-node": ct.node, "data-state": ct.state }, root);
      var req = ms(ct.requestedAt), alloc = ms(ct.allocatedAt), launch = ms(ct.launchedAt), fin = ms(ct.finishedAt);
      var end = fin != null ? fin : now;
      var cls = ct.state === "COMPLETED" ? "end-" + endOf(ct) + " exit-" + (ct.exitClass || "none") : "seg-running";
      text(svg("text", { x: 4, y: y + rowH - 5, "class": "rowlabel" }, g), shortID(ct.id) + " " + nodeLabel(ct.node));
      if (alloc == null) { // adopted from an earlier attempt: running since before this one started
        bar(g, t0, end, cls + " adopted", ct.id + ": started by an earlier AM attempt");
      } else {
        if (req != null) { bar(g, req, alloc, "seg-pending", ct.id + ": waited " + dur(alloc - req) + " for YARN to allocate it"); pending += alloc - req; }
        var started = launch != null ? launch : end;
        bar(g, alloc, started, "seg-launching", ct.id + ": " + dur(started - alloc) + " from allocation to " + (launch != null ? "started" : ct.state === "COMPLETED" ? "its end (never started)" : "now"));
        launching += started - alloc;
        if (launch != null) {
          bar(g, launch, end, cls, ct.id + ": ran " + dur(end - launch) + (fin != null ? ", ended " + (ct.exitClass || "") + " (exit " + ct.exitStatus + ")" : ", " + ct.state.toLowerCase()));
          running += end - launch;
        }
      }
      var outcome = ct.state === "COMPLETED" ? (ct.exitClass || "ended") : ct.state.toLowerCase();
      var total = req != null ? end - req : alloc != null ? end - alloc : null;
      text(svg("text", { x: width - rightW + 6, y: y + rowH - 5, "class": "rowend end-text-" + (ct.state === "COMPLETED" ? endOf(ct) : "active") }, g),
        outcome + " · " + dur(total));
      y += rowH + gap;
      (gpuRows.by[ct.id] || []).forEach(function (gs) {
        drawGPURow(root, ct, gs, { y: y, h: gpuH, x: x, labelW: labelW, plotW: plotW, rightX: width - rightW + 6, t0: t0, now: now });
        y += gpuH + gap;
      });
    });
    (s.asks || []).forEach(function (a) {
      var g = svg("g", { "class": "bar ask", "data-ask": a.id }, root);
      text(svg("text", { x: 4, y: y + rowH - 5, "class": "rowlabel" }, g), "ask " + a.id + ": " + a.pending + " waiting");
      var since = ms(a.since);
      if (since != null) {
        bar(g, since, now, "seg-pending open", "request " + a.id + ": " + a.pending + " container(s) asked for " + dur(now - since) + " ago, not allocated yet");
        pending += (now - since) * a.pending;
      }
      text(svg("text", { x: width - rightW + 6, y: y + rowH - 5, "class": "rowend" }, g), "pending · " + dur(since != null ? now - since : null));
      y += rowH + gap;
    });
    if (!rows) text(svg("text", { x: labelW, y: top + rowH - 5, "class": "rowlabel" }, root), "no container asked for yet");
    var older = (s.containers || []).length - cts.length + (s.finishedNotListed || 0);
    text(byId("tl-note"), "since " + clock(new Date(t0).toISOString()) + " · containers spent " + dur(pending) + " waiting for YARN, " +
      dur(launching) + " starting, " + dur(running) + " running" + (older > 0 ? " · " + older + " older containers not drawn" : "") +
      (gpuRows.left > 0 ? " · utilisation of " + gpuRows.left + " older GPUs not drawn (api/v1/containers/<id>/gpus has it)" : ""));
  }

  // ---- GPU utilisation under the timeline (docs/running.md#gpu-utilisation) ----

  // gpuRowCounts picks the GPUs whose utilisation rows are drawn: those of the newest containers
  // first, at most maxGPURows; by maps a container id to its GPUs drawn.
  function gpuRowCounts(cts) {
    var by = {}, drawn = 0, left = 0;
    for (var i = cts.length - 1; i >= 0; i--) {
      var gs = cts[i].gpus || [];
      if (!gs.length) continue;
      if (drawn + gs.length > maxGPURows) { left += gs.length; continue; }
      by[cts[i].id] = gs;
      drawn += gs.length;
    }
    return { by: by, drawn: drawn, left: left };
  }

  // drawGPURow draws one GPU's utilisation (0–100 %) on the timeline's time axis: its history's steps
  // as a line over a filled area, the idle spells (steps under idlePercent) shaded, a step without a
  // sample left blank. A GPU without a history (no utilisation reported) gets its label only.
  function drawGPURow(root, ct, gs, o) {
    var g = svg("g", { "class": "gpu-util", "data-container": ct.id, "data-gpu": gs.index, "data-uuid": gs.uuid }, root);
    var top = o.y + 2, bottom = o.y + o.h - 2;
    function r1(v) { return Math.round(v * 10) / 10; } // a tenth of a pixel: shorter paths, same picture
    function vy(v) { return r1(bottom - Math.max(0, Math.min(100, v)) / 100 * (bottom - top)); }
    text(svg("text", { x: 20, y: o.y + o.h / 2 + 4, "class": "rowlabel gpu-label" }, g), "GPU " + gs.index + (gs.samples ? " · mean " + Math.round(gs.meanUtil) + "%" : ""));
    var frame = svg("rect", { x: o.labelW, y: top, width: o.plotW, height: bottom - top, "class": "util-frame" }, g);
    text(svg("title", {}, frame), "GPU " + gs.index + " (" + gs.uuid + ") of " + ct.id + ": utilisation 0–100 %");
    var h = gs.history;
    var steps = h && h.util ? h.util : [];
    var line = "", area = "", open = false, idleFrom = null, idleN = 0;
    function spell(endIdx) {
      if (idleFrom == null) return;
      var a = h.from + idleFrom * h.stepMs, b = h.from + endIdx * h.stepMs;
      var r = svg("rect", { x: o.x(a), y: top, width: Math.max(1, o.x(b) - o.x(a)), height: bottom - top, "class": "idle-spell" }, g);
      text(svg("title", {}, r), "GPU " + gs.index + " idle (under " + idlePercent + " %) for about " + dur(b - a));
      idleFrom = null;
      idleN++;
    }
    var areaStart = 0;
    steps.forEach(function (v, i) {
      var a = r1(o.x(h.from + i * h.stepMs)), b = r1(o.x(h.from + (i + 1) * h.stepMs));
      if (v < 0) {
        if (open) { area += " V" + bottom + " H" + areaStart + " Z"; open = false; }
        spell(i);
        return;
      }
      if (v < idlePercent) { if (idleFrom == null) idleFrom = i; } else spell(i);
      if (!open) {
        line += " M" + a + " " + vy(v) + " H" + b;
        area += " M" + a + " " + bottom + " V" + vy(v) + " H" + b;
        areaStart = a;
        open = true;
      } else {
        line += " V" + vy(v) + " H" + b;
        area += " V" + vy(v) + " H" + b;
      }
    });
    if (open) area += " V" + bottom + " H" + areaStart + " Z";
    spell(steps.length);
    if (line) {
      svg("path", { d: area.trim(), "class": "util-area" }, g);
      text(svg("title", {}, svg("path", { d: line.trim(), "class": "util-line" }, g)),
        "GPU " + gs.index + " of " + ct.id + ": mean " + Math.round(gs.meanUtil) + " % over " + gs.samples + " samples, idle " + Math.round(100 * gs.idleShare) + " % of them");
    }
    var right = !gs.samples ? "no utilisation" : (gs.util != null ? Math.round(gs.util) + "% now" : "–") + " · idle " + Math.round(100 * gs.idleShare) + "%";
    text(svg("text", { x: o.rightX, y: o.y + o.h / 2 + 4, "class": "rowend" + (idleN ? " gpu-idle-text" : "") }, g), right);
  }

  // ---- the events ----

  function renderEvents(evs) {
    var body = document.querySelector("#events tbody");
    evs.forEach(function (e) {
      if (e.id <= lastEvent && e.type !== "gap") return;
      lastEvent = Math.max(lastEvent, e.id);
      var tr = document.createElement("tr");
      tr.className = "sev-" + e.severity;
      tr.setAttribute("data-event", e.type);
      cell(tr, e.id);
      cell(tr, (e.time || "").replace("T", " ").replace(/\..*Z$/, "Z"));
      cell(tr, e.type);
      cell(tr, e.message);
      body.insertBefore(tr, body.firstChild);
    });
    while (body.children.length > maxEvents) body.removeChild(body.lastChild);
  }

  function get(url) {
    return fetch(url, { headers: { "Accept": "application/json" }, cache: "no-store" }).then(function (r) {
      if (!r.ok) throw new Error(url + ": HTTP " + r.status);
      return r.json();
    });
  }

  function render(s) {
    renderSummary(s);
    noteHosts(s);
    // One failing drawing must not take the others down with it.
    [renderMap, renderTimeline, renderTable].forEach(function (f) {
      try { f(s); } catch (err) { text(byId("diagnostics"), "page error in " + f.name + ": " + err.message); }
    });
  }

  function poll() {
    var evURL = lastEvent ? "api/v1/events?format=json&since=" + lastEvent : "api/v1/events?format=json&limit=" + maxEvents;
    Promise.all([get("api/v1/status"), get(evURL)]).then(function (res) {
      render(res[0]);
      renderEvents(res[1]);
      text(byId("updated"), new Date().toISOString().replace("T", " ").replace(/\..*Z$/, "Z"));
    }).catch(function (err) {
      text(byId("updated"), "failed: " + err.message);
    }).then(function () {
      setTimeout(poll, pollMs);
    });
  }
  // Anything the browser blocks under the page's Content-Security-Policy is said on the page (and
  // the UI's integration test looks for it).
  document.addEventListener("securitypolicyviolation", function (e) {
    text(byId("csp"), "blocked by the page's Content-Security-Policy: " + e.violatedDirective + " " + (e.blockedURI || "inline"));
  });
  poll();
})();
