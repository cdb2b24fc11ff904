// The yarn-am status page: polls the AM's JSON API with relative URLs (the RM's web proxy buffers
// streamed responses, so polling is what works everywhere). No secret is ever used or shown here:
// the page only reads.
"use strict";
(function () {
  var lastEvent = 0;
  var maxEvents = 50;
  var pollMs = 2000;

  function text(el, s) { el.textContent = s == null ? "" : String(s); }
  function byId(id) { return document.getElementById(id); }
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

  function renderStatus(s) {
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
    var body = document.querySelector("#containers tbody");
    while (body.firstChild) body.removeChild(body.firstChild);
    (s.containers || []).forEach(function (ct) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-container", ct.id);
      cell(tr, ct.id, "id");
      cell(tr, ct.node, "node");
      cell(tr, cap(ct.resources), "resources");
      var infos = ct.infos || {};
      var gpu = cell(tr, infoMain(infos.gpu), "gpu");
      gpu.setAttribute("data-gpu", infoMain(infos.gpu));
      cell(tr, Object.keys(infos).filter(function (k) { return k !== "gpu"; }).sort()
        .map(function (k) { return k + ": " + infoMain(infos[k]); }).join("; "), "devices");
      cell(tr, ct.state, "cstate");
      var exit = "";
      if (ct.exitStatus !== undefined && ct.exitStatus !== null) exit = ct.exitStatus + " " + (ct.exitClass || "");
      if (ct.diagnostics) exit += (exit ? ": " : "") + ct.diagnostics;
      cell(tr, exit, "exit");
      body.appendChild(tr);
    });
  }

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

  function poll() {
    var evURL = lastEvent ? "api/v1/events?format=json&since=" + lastEvent : "api/v1/events?format=json&limit=" + maxEvents;
    Promise.all([get("api/v1/status"), get(evURL)]).then(function (res) {
      renderStatus(res[0]);
      renderEvents(res[1]);
      text(byId("updated"), new Date().toISOString().replace("T", " ").replace(/\..*Z$/, "Z"));
    }).catch(function (err) {
      text(byId("updated"), "failed: " + err.message);
    }).then(function () {
      setTimeout(poll, pollMs);
    });
  }
  poll();
})();
