// surf live view: the list of live sessions, kept up to date by /events.
"use strict";
(function () {
  const body = document.querySelector("#sessions tbody");
  const empty = document.getElementById("empty");
  const conn = document.getElementById("conn");

  function cell(text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    return td;
  }

  let shown = "";
  function render(list) {
    const now = JSON.stringify(list);
    if (now === shown) return;
    shown = now;
    body.replaceChildren();
    empty.hidden = list.length > 0;
    for (const s of list) {
      const tr = document.createElement("tr");
      tr.dataset.id = s.id;
      const name = document.createElement("td");
      const a = document.createElement("a");
      a.href = "s/" + encodeURIComponent(s.id);
      a.textContent = s.id;
      name.appendChild(a);
      tr.appendChild(name);
      tr.appendChild(cell(s.owner));
      const page = document.createElement("td");
      const t = document.createElement("div");
      t.textContent = s.title || "(no title)";
      const u = document.createElement("div");
      u.className = "url";
      u.textContent = s.url || "";
      page.append(t, u);
      tr.appendChild(page);
      const st = document.createElement("td");
      const badge = document.createElement("span");
      badge.className = "state " + s.state.replace(/ /g, "-");
      badge.textContent = s.state + (s.pending ? " (" + s.pending + ")" : "");
      st.appendChild(badge);
      tr.appendChild(st);
      tr.appendChild(cell(s.help ? "asks for help: " + s.help : (s.doing || "")));
      tr.appendChild(cell(String(s.steps)));
      body.appendChild(tr);
    }
  }

  const es = new EventSource("events");
  es.addEventListener("open", () => { conn.textContent = "live"; });
  es.addEventListener("error", () => { conn.textContent = "reconnecting…"; });
  es.addEventListener("sessions", (e) => render(JSON.parse(e.data)));
})();
