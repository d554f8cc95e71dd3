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
  const views = new Map();     // bridge/id -> the live view (a div.screen holding its <img>), while watched
  // bridge/id -> this page's takeover: {key, seen}; the worker takes
  // input only with its key. seen: the list has shown it taken over since
  // (so a later "not taken over" means it was handed back).
  const takes = new Map();

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
    try { return await r.json(); } catch (e) { return {}; }
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

  function action(btn, s, what, body, msg, then) {
    btn.addEventListener("click", async () => {
      btn.disabled = true;
      msg.textContent = "";
      try {
        const rep = await post(sessURL(s) + "/" + what, typeof body === "function" ? body() : body);
        if (then) then(rep);
      } catch (e) { msg.textContent = e.message; btn.disabled = false; }
    });
  }

  // --- a person's clicks, wheel and keys on the live picture of a
  // session this page took over: in order, one POST at a time, each with
  // the takeover's key (the worker refuses any other)
  let inputs = Promise.resolve();
  function send(key, ev, msg) {
    const t = takes.get(key);
    if (!t) return;
    const url = "/s/" + key.split("/").map(encodeURIComponent).join("/") + "/input";
    ev.takeover_key = t.key;
    inputs = inputs.then(() => post(url, ev)).catch((e) => { if (msg.isConnected) msg.textContent = e.message; });
  }
  function frac(img, e) {
    const r = img.getBoundingClientRect();
    return {
      x: Math.min(1, Math.max(0, (e.clientX - r.left) / r.width)),
      y: Math.min(1, Math.max(0, (e.clientY - r.top) / r.height)),
    };
  }
  function mods(e) {
    return (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0);
  }
  const buttons = ["left", "middle", "right"];
  function screen(key, s) {
    const box = el("div", null, "screen");
    box.tabIndex = 0;
    box.setAttribute("aria-label", "the live view of " + (s.task || s.id) + "; while you have taken it over, clicks and keys here go to the page");
    const img = el("img", null, "live");
    img.alt = "the live view of " + (s.task || s.id);
    img.draggable = false;
    img.src = sessURL(s) + "/live.mjpg";
    box.append(img);
    const mine = () => {
      const t = takes.get(key);
      return !!t && t.seen;
    };
    const msg = () => box.parentElement ? box.parentElement.querySelector(".msg") || el("div") : el("div");
    box.addEventListener("click", (e) => {
      if (!mine()) return;
      e.preventDefault();
      box.focus();
      const p = frac(img, e);
      send(key, { kind: "click", x: p.x, y: p.y, button: buttons[e.button] || "left", clicks: 1, modifiers: mods(e) }, msg());
    });
    box.addEventListener("contextmenu", (e) => { if (mine()) e.preventDefault(); });
    box.addEventListener("wheel", (e) => {
      if (!mine()) return;
      e.preventDefault();
      const p = frac(img, e);
      send(key, { kind: "wheel", x: p.x, y: p.y, dx: e.deltaX, dy: e.deltaY }, msg());
    }, { passive: false });
    box.addEventListener("keydown", (e) => {
      if (!mine()) return;
      e.preventDefault();
      const m = mods(e);
      // A printable key carries its text: the worker's surfer keeps the
      // run of typing out of every record (journal, HAR, the model's view).
      const text = e.key.length === 1 && !(m & 6) ? e.key : undefined;
      send(key, { kind: "key_down", key: e.key, code: e.code, text: text, modifiers: m }, msg());
      send(key, { kind: "key_up", key: e.key, code: e.code, modifiers: m }, msg());
    });
    box.addEventListener("paste", (e) => {
      if (!mine()) return;
      e.preventDefault();
      const text = (e.clipboardData && e.clipboardData.getData("text/plain")) || "";
      if (text) send(key, { kind: "type", text: text.slice(0, 4096) }, msg());
    });
    return box;
  }
  function unwatch(key) {
    const box = views.get(key);
    if (!box) return;
    const img = box.querySelector("img");
    if (img) img.src = "";
    box.remove();
    views.delete(key);
  }

  // the hand-back messages being written, kept across re-renders
  const drafts = new Map();
  function renderSessions(list) {
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.draft : undefined;
    // a live picture being typed into keeps the focus across re-renders
    const focusedScreen = [...views.values()].find((v) => v === document.activeElement);
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
        }, msg, () => { takes.delete(key); });
        acts.append(input, b);
        const t = takes.get(key);
        if (t) t.seen = true;
        if (t) acts.append(el("div", "You have the wheel: clicks, wheel and keys on the picture go to the page (the agent waits). What you type is never recorded.", "hint"));
        else acts.append(el("div", "Taken over from another page: hand back, then take over here to click and type.", "hint"));
        if (focused === key) setTimeout(() => { input.focus(); input.setSelectionRange(input.value.length, input.value.length); });
      } else {
        const t = takes.get(key);
        if (t && t.seen) takes.delete(key); // handed back (here or elsewhere)
        const b = el("button", "Take over", "takeover");
        action(b, s, "takeover", {}, msg, (rep) => {
          if (rep && rep.key) takes.set(key, { key: rep.key, seen: false });
          // the picture, to click and type on
          if (!views.has(key)) views.set(key, screen(key, s));
          renderSessions(last.sessions || []);
          const v = views.get(key);
          if (v) v.focus();
        });
        acts.append(b);
      }
      if (s.stoppable) {
        const stop = el("button", "Stop the run", "stop");
        action(stop, s, "stop", {}, msg);
        acts.append(stop);
      }
      const watch = el("button", views.has(key) ? "Stop watching" : "Watch", "watch");
      watch.addEventListener("click", () => {
        if (views.has(key)) unwatch(key);
        else views.set(key, screen(key, s));
        renderSessions(last.sessions || []);
      });
      acts.append(watch, msg);
      if (views.has(key)) {
        views.get(key).classList.toggle("taken", s.state === "taken over" && takes.has(key));
        acts.append(views.get(key));
      }
      tr.append(acts);
      sessBody.append(tr);
    }
    for (const k of snaps.keys()) if (!keys.has(k)) snaps.delete(k);
    if (focusedScreen && focusedScreen.isConnected) focusedScreen.focus({ preventScroll: true });
    for (const k of [...views.keys()]) if (!keys.has(k)) unwatch(k);
    for (const k of [...takes.keys()]) if (!keys.has(k)) takes.delete(k);
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
