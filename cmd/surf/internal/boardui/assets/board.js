// surf board: the tasks of the board and the live sessions of its
// workers, kept up to date by /events; approvals, takeovers and
// hand-backs go to the session's worker through this page's server.
"use strict";
(function () {
  const conn = document.getElementById("conn");
  const errBox = document.getElementById("error");
  const sessBody = document.querySelector("#sessions tbody");
  const noSessions = document.getElementById("nosessions");
  const tasksBox = document.getElementById("tasks");
  const noTasks = document.getElementById("notasks");
  const order = ["running", "ready", "pending", "done", "failed", "cancelled"];
  const open = new Set();      // task ids whose details are open
  const snaps = new Map();     // bridge/id -> the session's approvals
  const views = new Map();     // bridge/id -> the live view's <img>, while watched

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function badge(state) { return el("span", state, "state " + String(state).replace(/ /g, "-")); }

  async function post(url, body) {
    const r = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) });
    if (!r.ok) {
      let msg = r.status + "";
      try { msg = (await r.json()).error || msg; } catch (e) { /* not JSON */ }
      throw new Error(msg);
    }
  }

  function sessURL(s) { return "/s/" + encodeURIComponent(s.bridge) + "/" + encodeURIComponent(s.id); }

  async function loadApprovals(s) {
    const key = s.bridge + "/" + s.id;
    try {
      const r = await fetch(sessURL(s) + "/snapshot");
      if (!r.ok) return;
      const snap = await r.json();
      snaps.set(key, snap.approvals || []);
    } catch (e) { return; }
    renderSessions(last.sessions || []);
  }

  function action(btn, s, what, body, msg) {
    btn.addEventListener("click", async () => {
      btn.disabled = true;
      msg.textContent = "";
      try { await post(sessURL(s) + "/" + what, typeof body === "function" ? body() : body); } catch (e) { msg.textContent = e.message; btn.disabled = false; }
    });
  }

  // the hand-back messages being written, kept across re-renders
  const drafts = new Map();
  function renderSessions(list) {
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.draft : undefined;
    sessBody.replaceChildren();
    noSessions.hidden = list.length > 0;
    const keys = new Set();
    for (const s of list) {
      const key = s.bridge + "/" + s.id;
      keys.add(key);
      const tr = el("tr");
      tr.dataset.worker = s.worker;
      tr.dataset.task = s.task || "";
      tr.dataset.session = s.id;
      tr.append(el("td", s.worker), el("td", s.task || s.owner));
      const page = el("td");
      page.append(el("div", s.title || "(no title)"), el("div", s.url || "", "url"));
      tr.append(page);
      const st = el("td");
      st.append(badge(s.state));
      tr.append(st);
      const doing = el("td");
      if (s.help) doing.append(el("div", "asks for help: " + s.help, "help"));
      else doing.textContent = s.doing || "";
      tr.append(doing, el("td", String(s.steps)));
      const acts = el("td");
      const msg = el("div", "", "msg");
      const approvals = s.pending ? (snaps.get(key) || []) : [];
      for (const a of approvals) {
        const box = el("div", null, "approval");
        box.dataset.approval = String(a.id);
        box.append(el("div", a.tool + (a.url ? " " + a.url : "")), el("div", a.reason || "", "meta"));
        if (a.why) box.append(el("div", "The agent says: " + a.why, "why"));
        const yes = el("button", "Approve", "approve");
        const no = el("button", "Deny", "deny");
        action(yes, s, "approve", { id: a.id, approve: true }, msg);
        action(no, s, "approve", { id: a.id, approve: false }, msg);
        box.append(yes, no);
        acts.append(box);
      }
      if (s.state === "taken over") {
        const input = el("input", null, "handback-msg");
        input.type = "text";
        input.maxLength = 2000;
        input.placeholder = "Message to the agent (optional)";
        input.setAttribute("aria-label", "message to the agent at hand-back");
        input.dataset.draft = key;
        input.value = drafts.get(key) || "";
        input.addEventListener("input", () => drafts.set(key, input.value));
        const b = el("button", "Hand back", "handback");
        action(b, s, "handback", () => {
          const m = (drafts.get(key) || "").trim();
          drafts.delete(key);
          return m ? { message: m } : {};
        }, msg);
        acts.append(input, b);
        if (focused === key) setTimeout(() => { input.focus(); input.setSelectionRange(input.value.length, input.value.length); });
      } else {
        const b = el("button", "Take over", "takeover");
        action(b, s, "takeover", {}, msg);
        acts.append(b);
      }
      if (s.stoppable) {
        const stop = el("button", "Stop the run", "stop");
        action(stop, s, "stop", {}, msg);
        acts.append(stop);
      }
      const watch = el("button", views.has(key) ? "Stop watching" : "Watch", "watch");
      watch.addEventListener("click", () => {
        const img = views.get(key);
        if (img) {
          img.src = "";
          img.remove();
          views.delete(key);
        } else {
          const v = el("img", null, "live");
          v.alt = "the live view of " + (s.task || s.id);
          v.src = sessURL(s) + "/live.mjpg";
          views.set(key, v);
        }
        renderSessions(last.sessions || []);
      });
      acts.append(watch, msg);
      if (views.has(key)) acts.append(views.get(key));
      tr.append(acts);
      sessBody.append(tr);
    }
    for (const k of snaps.keys()) if (!keys.has(k)) snaps.delete(k);
    for (const [k, img] of views) if (!keys.has(k)) { img.src = ""; views.delete(k); }
  }

  function dd(dl, name, value, pre) {
    if (value === undefined || value === null || value === "") return;
    dl.append(el("dt", name));
    const d = el("dd");
    if (pre) d.append(el("pre", value)); else if (value instanceof Node) d.append(value); else d.textContent = value;
    dl.append(d);
  }
  function fileLink(name, label) {
    const a = el("a", label || name);
    a.href = "/files/" + name.split("/").map(encodeURIComponent).join("/");
    a.target = "_blank";
    a.rel = "noopener";
    return a;
  }

  function renderTask(r) {
    const t = r.task;
    const d = el("details", null, "task");
    d.dataset.id = t.id;
    d.open = open.has(t.id);
    d.addEventListener("toggle", () => { if (d.open) open.add(t.id); else open.delete(t.id); });
    const sum = el("summary");
    sum.append(badge(r.state), " ", el("b", t.id), " ", t.instruction);
    if (t.after && t.after.length) sum.append(" ", el("span", "after " + t.after.join(", "), "meta"));
    if (r.worker) sum.append(" ", el("span", "· " + r.worker, "meta"));
    d.append(sum);
    const dl = el("dl", null, "detail");
    dd(dl, "start URL", t.start_url);
    dd(dl, "progress", r.state === "running" ? r.progress : "");
    dd(dl, "reason", r.reason);
    dd(dl, "attempts", r.attempts ? String(r.attempts) : "");
    const res = r.result;
    if (res) {
      dd(dl, "answer", res.answer);
      if (res.data !== undefined) dd(dl, "result", JSON.stringify(res.data, null, 2), true);
      dd(dl, "steps", res.steps ? String(res.steps) + (res.end_reason ? " (" + res.end_reason + ")" : "") : "");
      const files = el("span");
      if (res.report) files.append(fileLink(res.report, "report"), " ");
      if (res.journal) files.append(fileLink(res.journal, "journal"), " ");
      for (const im of res.images || []) files.append(fileLink(im, im.split("/").pop()), " ");
      if (files.childNodes.length) dd(dl, "files", files);
    }
    if (r.notes && r.notes.length) dd(dl, "notes", r.notes.join("\n"));
    d.append(dl);
    return d;
  }

  function renderTasks(tasks) {
    tasksBox.replaceChildren();
    noTasks.hidden = tasks.length > 0;
    for (const st of order) {
      const these = tasks.filter((r) => r.state === st);
      if (!these.length) continue;
      const sec = el("section");
      sec.dataset.state = st;
      sec.append(el("h3", st + " (" + these.length + ")"));
      for (const r of these) sec.append(renderTask(r));
      tasksBox.append(sec);
    }
  }

  let last = {};
  function render(v) {
    last = v;
    errBox.hidden = !v.error;
    errBox.textContent = v.error ? "watching the board: " + v.error : "";
    document.getElementById("live").hidden = !v.live;
    renderSessions(v.sessions || []);
    renderTasks(v.tasks || []);
    for (const s of v.sessions || []) if (s.pending) loadApprovals(s);
  }

  const es = new EventSource("/events");
  es.addEventListener("open", () => { conn.textContent = "live"; });
  es.addEventListener("error", () => { conn.textContent = "reconnecting…"; });
  es.addEventListener("board", (e) => render(JSON.parse(e.data)));
})();
