// surf live view: one session. The live image is an MJPEG stream that
// runs only while this page shows it; events (state, steps, approvals,
// notices) come from /s/ID/events; every action is a same-origin POST.
"use strict";
(function () {
  // Paths are relative to this page (.../s/ID), so the live view works
  // wherever it is mounted (surf serve --board puts it under /live/).
  const id = decodeURIComponent(location.pathname.split("/").pop() || "");
  const base = encodeURIComponent(id);
  const $ = (x) => document.getElementById(x);
  const live = $("live"), somImg = $("somimg"), screen = $("screen");
  let taken = false;
  let lastSteps = 0;

  // --- the live image: streamed only while the page is visible
  function watch(on) {
    if (on) {
      if (!live.getAttribute("src")) live.src = base + "/live.mjpg";
    } else {
      live.removeAttribute("src");
    }
  }
  document.addEventListener("visibilitychange", () => watch(!document.hidden));
  // after the page's load event: the stream never ends, and would hold it
  if (document.readyState === "complete") watch(!document.hidden);
  else window.addEventListener("load", () => watch(!document.hidden));

  function showSOM() {
    if ($("som").checked) {
      somImg.src = base + "/som?n=" + lastSteps + "&t=" + Date.now();
      somImg.hidden = false;
    } else {
      somImg.hidden = true;
      somImg.removeAttribute("src");
    }
  }
  $("som").addEventListener("change", showSOM);

  // --- actions: POSTs, in order
  let queue = Promise.resolve();
  function post(path, body) {
    const p = queue.then(() => fetch(base + path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body || {}),
    })).then(async (r) => {
      if (!r.ok) {
        let msg = r.status + " " + r.statusText;
        try { const j = await r.json(); if (j.error) msg = j.error; } catch (e) { /* not JSON */ }
        notice({ kind: "error", text: msg });
      }
      return r.ok;
    }).catch((e) => { notice({ kind: "error", text: String(e) }); return false; });
    queue = p;
    return p;
  }

  $("takeover").addEventListener("click", () => post("/takeover").then((ok) => { if (ok) screen.focus(); }));
  $("handback").addEventListener("click", () => {
    const msg = $("handback-msg").value.trim();
    post("/handback", msg ? { message: msg } : {}).then((ok) => { if (ok) $("handback-msg").value = ""; });
  });
  $("stop").addEventListener("click", () => post("/stop"));

  // --- a person's input on the live view, while taken over
  function frac(e) {
    const r = live.getBoundingClientRect();
    return {
      x: Math.min(1, Math.max(0, (e.clientX - r.left) / r.width)),
      y: Math.min(1, Math.max(0, (e.clientY - r.top) / r.height)),
    };
  }
  function mods(e) {
    return (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0);
  }
  const buttons = ["left", "middle", "right"];
  screen.addEventListener("click", (e) => {
    if (!taken) return;
    e.preventDefault();
    screen.focus();
    const p = frac(e);
    post("/input", { kind: "click", x: p.x, y: p.y, button: buttons[e.button] || "left", clicks: 1, modifiers: mods(e) });
  });
  screen.addEventListener("contextmenu", (e) => { if (taken) e.preventDefault(); });
  screen.addEventListener("wheel", (e) => {
    if (!taken) return;
    e.preventDefault();
    const p = frac(e);
    post("/input", { kind: "wheel", x: p.x, y: p.y, dx: e.deltaX, dy: e.deltaY });
  }, { passive: false });
  screen.addEventListener("keydown", (e) => {
    if (!taken) return;
    e.preventDefault();
    const m = mods(e);
    // A printable key carries its text: the surfer keeps the run of
    // typing out of every record (journal, HAR, the model's view).
    const text = e.key.length === 1 && !(m & 6) ? e.key : undefined;
    post("/input", { kind: "key_down", key: e.key, code: e.code, text: text, modifiers: m });
    post("/input", { kind: "key_up", key: e.key, code: e.code, modifiers: m });
  });
  screen.addEventListener("paste", (e) => {
    if (!taken) return;
    e.preventDefault();
    const text = (e.clipboardData && e.clipboardData.getData("text/plain")) || "";
    if (text) post("/input", { kind: "type", text: text.slice(0, 4096) });
  });

  // --- rendering
  function setState(s) {
    $("owner").textContent = s.owner + " · " + s.id;
    const st = $("state");
    st.textContent = s.state + (s.taken_by ? " by " + s.taken_by : "");
    st.className = "state " + s.state.replace(/ /g, "-");
    $("title").textContent = s.title || "(no title)";
    $("url").textContent = s.url || "";
    taken = s.state === "taken over";
    $("takeover").hidden = taken;
    $("handback").hidden = !taken;
    $("handback-msg").hidden = !taken;
    $("stop").hidden = !s.stoppable;
    showAnswer(s.answer);
    screen.classList.toggle("taken", taken);
    $("hint").textContent = taken
      ? "You have the wheel: clicks, wheel and keys on the picture go to the page (the agent waits). What you type is never recorded. Hand back when done."
      : "The agent has the wheel. Take over to click and type in the page yourself; what you type is never recorded.";
    const help = $("help");
    help.hidden = !s.help;
    help.textContent = s.help ? "The agent asks for help: " + s.help + " — take over, do it, then hand back." : "";
    document.title = "surf: " + s.state + " · " + (s.title || s.id);
  }

  // the run's end, on a card of its own
  function showAnswer(a) {
    const box = $("answer-box");
    box.hidden = !a;
    if (!a) return;
    const answered = a.end_reason === "answered";
    $("answer-head").textContent = answered ? "Answer" : "Ended: " + a.end_reason;
    $("answer-text").textContent = a.text || (answered ? "" : "(no answer)");
    const data = $("answer-data");
    data.hidden = !a.data;
    if (a.data) {
      try { data.textContent = JSON.stringify(JSON.parse(a.data), null, 2); } catch (e) { data.textContent = a.data; }
    }
    $("answer-end").textContent = "step " + a.step + " · " + new Date(a.at).toLocaleTimeString();
    box.classList.toggle("failed", !answered);
  }

  // a step's picture, labelled with what it shows
  function picture(n, label, text) {
    const fig = document.createElement("figure");
    const cap = document.createElement("figcaption");
    cap.className = "pic-" + label;
    cap.textContent = label + ": " + text;
    const img = document.createElement("img");
    img.alt = label + " step " + n;
    img.src = base + "/step/" + n;
    fig.append(cap, img);
    return fig;
  }

  function notice(n) {
    const d = document.createElement("div");
    d.className = n.kind;
    d.textContent = n.text;
    const box = $("notices");
    box.appendChild(d);
    while (box.children.length > 8) box.removeChild(box.firstChild);
  }

  const steps = new Map();
  function addStep(s) {
    if ($("steps").querySelector('li[data-n="' + s.n + '"]')) return; // in the snapshot too
    steps.set(s.n, s);
    const li = document.createElement("li");
    li.dataset.n = s.n;
    if (s.is_error) li.classList.add("error");
    if (s.verdict !== "allow" && s.verdict !== "approved") li.classList.add("denied");
    const det = document.createElement("details");
    const sum = document.createElement("summary");
    sum.textContent = s.n + ". " + s.tool + (s.target ? " " + s.target : "") + "  [" + s.verdict + "]";
    det.appendChild(sum);
    const meta = document.createElement("div");
    meta.className = "meta";
    meta.textContent = s.duration_ms + " ms" + (s.observe_ms ? " (observe " + s.observe_ms + " ms)" : "") + " · " + s.tokens + " tokens" + (s.url ? " · " + s.url : "");
    det.appendChild(meta);
    if (s.reasoning) {
      const r = document.createElement("div");
      r.textContent = "why: " + s.reasoning;
      det.appendChild(r);
    }
    const res = document.createElement("div");
    res.className = "result";
    res.textContent = (s.is_error ? "error: " : "") + (s.result || "") + (s.done ? "\nended: " + s.end_reason + (s.answer ? "\nanswer: " + s.answer : "") : "");
    det.appendChild(res);
    for (const n of s.notes || []) {
      const d = document.createElement("div");
      d.className = "meta";
      d.textContent = "note: " + n;
      det.appendChild(d);
    }
    if (s.image) {
      det.addEventListener("toggle", () => {
        if (!det.open || det.querySelector("figure")) return;
        if (s.picture === "after") {
          det.appendChild(picture(s.n, "after", "the page this call left"));
          return;
        }
        det.appendChild(picture(s.n, "before", "the page the model saw when it chose this step"));
        // the next step's picture is the page this one left
        const next = steps.get(s.n + 1);
        if (next && next.image && next.picture === "before") {
          det.appendChild(picture(next.n, "after", "the page this step left (the next step's view)"));
        }
      });
    }
    li.appendChild(det);
    $("steps").appendChild(li);
    lastSteps = Math.max(lastSteps, s.n);
    if ($("som").checked) showSOM();
  }

  function addApproval(a) {
    if ($("approvals").querySelector('li[data-id="' + a.id + '"]')) return; // in the snapshot too
    const li = document.createElement("li");
    li.dataset.id = a.id;
    const p = document.createElement("p");
    p.textContent = a.tool + (a.url ? " " + a.url : "") + ": " + a.reason + (a.host ? " (approving opens " + a.host + ")" : "");
    li.appendChild(p);
    if (a.why) {
      const why = document.createElement("p");
      why.className = "why";
      why.textContent = "The agent says: " + a.why;
      li.appendChild(why);
    }
    const yes = document.createElement("button");
    yes.type = "button"; yes.className = "approve"; yes.textContent = "Approve";
    const no = document.createElement("button");
    no.type = "button"; no.className = "deny"; no.textContent = "Deny";
    yes.addEventListener("click", () => post("/approve", { id: a.id, approve: true }));
    no.addEventListener("click", () => post("/approve", { id: a.id, approve: false }));
    li.append(yes, document.createTextNode(" "), no);
    $("approvals").appendChild(li);
    $("approvals-box").hidden = false;
  }
  function removeApproval(aid) {
    const li = $("approvals").querySelector('li[data-id="' + aid + '"]');
    if (li) li.remove();
    $("approvals-box").hidden = $("approvals").children.length === 0;
  }

  const es = new EventSource(base + "/events");
  es.addEventListener("open", () => { $("conn").textContent = "live"; });
  es.addEventListener("error", () => { $("conn").textContent = "reconnecting…"; });
  es.addEventListener("snapshot", (e) => {
    const s = JSON.parse(e.data);
    $("steps").replaceChildren();
    steps.clear();
    $("approvals").replaceChildren();
    $("notices").replaceChildren();
    setState(s.summary);
    (s.steps || []).forEach(addStep);
    (s.approvals || []).forEach(addApproval);
    (s.notices || []).forEach(notice);
    $("approvals-box").hidden = $("approvals").children.length === 0;
  });
  es.addEventListener("state", (e) => setState(JSON.parse(e.data)));
  es.addEventListener("step", (e) => addStep(JSON.parse(e.data)));
  es.addEventListener("observed", () => { if ($("som").checked) showSOM(); });
  es.addEventListener("approval", (e) => addApproval(JSON.parse(e.data)));
  es.addEventListener("approved", (e) => removeApproval(JSON.parse(e.data).id));
  es.addEventListener("notice", (e) => notice(JSON.parse(e.data)));
  es.addEventListener("end", () => {
    es.close();
    $("conn").textContent = "ended";
    notice({ kind: "end", text: "This session has ended." });
    watch(false);
  });
})();
