// The study page: sign in, play by clicking, ask for hints, see results. Every text from the
// server (the study's texts, codes, events, an advisor's words) is set as text, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const KEY = "dhumbal-study";

let study = null;
let me = null; // {code, token}
let view = null; // the current decision's view
let chosen = new Set(); // cards selected in the hand (discard phase)
let busy = false;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function showError(message) {
  const e = $("error");
  e.textContent = message || "";
  e.hidden = !message;
}

async function api(method, path, body, token) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers["Authorization"] = "Bearer " + token;
  const r = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try {
    data = await r.json();
  } catch (e) {
    data = { error: "the server's answer is not JSON (" + r.status + ")" };
  }
  if (!r.ok) {
    const err = new Error(data.error || "HTTP " + r.status);
    err.status = r.status;
    throw err;
  }
  return data;
}

function paragraphs(node, text) {
  node.replaceChildren();
  for (const p of String(text || "").split(/\n\s*\n/)) {
    if (p.trim()) node.appendChild(el("p", "", p.trim()));
  }
}

function card(name, extra) {
  const red = name.includes("♥") || name.includes("♦");
  const c = el("span", "card" + (red ? " red" : "") + (extra ? " " + extra : ""));
  c.dataset.card = name;
  const joker = name.startsWith("Jk");
  c.appendChild(el("span", "rank", joker ? "Jk" : name.slice(0, -1)));
  c.appendChild(el("span", "suit", joker ? "★" : name.slice(-1)));
  return c;
}

function remember() {
  localStorage.setItem(KEY, JSON.stringify({ code: me.code }));
  sessionStorage.setItem(KEY, JSON.stringify(me));
}

async function start() {
  try {
    study = await api("GET", "/api/study");
  } catch (e) {
    showError("The study cannot be reached: " + e.message);
    return;
  }
  $("title").textContent = study.name;
  $("subtitle").textContent =
    study.games + " game" + (study.games === 1 ? "" : "s") + " of Dhumbal, " +
    study.players + " players, " + study.scoring +
    (study.hints ? "; hints available" : "");
  paragraphs($("instructions"), study.instructions);
  paragraphs($("consent"), study.consent || "No consent text for this study.");
  $("signup-box").hidden = !study.signup;
  $("access").hidden = !study.access_code;
  $("signin").addEventListener("click", () => signIn($("code").value.trim()));
  $("signup").addEventListener("click", signUp);
  $("hint-button").addEventListener("click", askHint);
  // A reload resumes: the token of this tab, else the code remembered here.
  const tab = JSON.parse(sessionStorage.getItem(KEY) || "null");
  const saved = JSON.parse(localStorage.getItem(KEY) || "null");
  if (tab && tab.token) {
    me = tab;
    try {
      const r = await api("GET", "/api/participants/" + encodeURIComponent(me.code) + "/state", undefined, me.token);
      return show(r.state);
    } catch (e) {
      // The server forgot the token (a restart): sign in again with the code.
    }
  }
  if (saved && saved.code) {
    $("code").value = saved.code;
    $("agree").checked = true;
    return signIn(saved.code);
  }
  $("intro").hidden = false;
}

async function signIn(code) {
  if (!$("agree").checked && study.consent) {
    $("intro").hidden = false;
    return showError("Please read the consent and tick the box first.");
  }
  try {
    const r = await api("POST", "/api/signin", { code, consent: $("agree").checked });
    me = { code: r.participant, token: r.token };
    remember();
    show(r.state);
  } catch (e) {
    $("intro").hidden = false;
    showError(e.message);
  }
}

async function signUp() {
  if (!$("agree").checked && study.consent) {
    return showError("Please read the consent and tick the box first.");
  }
  try {
    const body = { consent: $("agree").checked };
    if (study.access_code) body.access_code = $("access").value.trim();
    const r = await api("POST", "/api/signup", body);
    me = { code: r.participant, token: r.token };
    remember();
    show(r.state);
  } catch (e) {
    showError(e.message);
  }
}

function show(state) {
  showError("");
  // For tests and scripts: where the page is.
  document.body.dataset.status = state.status;
  document.body.dataset.seq = state.status === "play" ? state.seq : "";
  $("intro").hidden = true;
  $("who").textContent = me ? "participant " + me.code : "";
  if (state.status === "play") return play(state);
  $("play").hidden = true;
  if (state.status === "done") {
    $("side").hidden = true;
    $("done").hidden = false;
    fillResults($("final"), state.results);
    return;
  }
  if (state.status === "failed") return showError("The game stopped on the server: " + state.message);
  showError("The table is being set; reload in a moment.");
}

function fillResults(body, results) {
  body.replaceChildren();
  for (const r of results || []) {
    const tr = el("tr");
    const other = r.standings.filter((_, s) => s !== r.seat);
    tr.appendChild(el("td", "", String(r.game + 1)));
    tr.appendChild(el("td", "", r.opponent));
    tr.appendChild(el("td", "", String(r.standings[r.seat])));
    tr.appendChild(el("td", "", other.join(", ")));
    tr.appendChild(el("td", r.won ? "won" : "lost", r.won ? "won" : "lost"));
    body.appendChild(tr);
  }
}

function play(state) {
  view = state;
  chosen = new Set();
  $("play").hidden = false;
  $("side").hidden = false;
  $("done").hidden = true;
  $("hint").hidden = true;
  $("hint-button").hidden = !view.hints;
  const phase = { call: "Call Jhyap, or play on?", discard: "Your discard: choose cards, then Discard", pick: "Take a card from the pile, or draw" }[view.phase];
  $("status").textContent =
    "Game " + (view.game + 1) + " of " + view.games + " against " + view.opponent +
    " · round " + (view.round + 1) + " · " + phase;
  const seats = $("seats");
  seats.replaceChildren();
  view.seats.forEach((s, i) => {
    if (i === view.seat) return;
    const box = el("div", "seat" + (s.active ? "" : " out"));
    box.appendChild(el("div", "seat-name", s.label));
    box.appendChild(el("div", "label", s.cards + " cards · " + s.standing + " " + view.scoring));
    const known = el("div", "hand");
    for (let k = 0; k < s.cards; k++) {
      known.appendChild(k < s.known.length ? card(s.known[k], "mini") : el("span", "card back mini"));
    }
    box.appendChild(known);
    seats.appendChild(box);
  });
  const mine = view.seats[view.seat];
  $("who").textContent = "participant " + me.code + " · you: " + mine.standing + " " + view.scoring;
  $("pile-count").textContent = view.pile;
  $("stock-count").textContent = view.stock;
  $("hand-value").textContent = view.hand_value;
  $("threshold").textContent = view.call_threshold;
  const pile = $("pile");
  pile.replaceChildren();
  const top = view.phase === "pick" ? view.pickable : view.pile_top;
  for (const name of top) {
    const c = card(name);
    if (view.phase === "pick") {
      const i = view.legal.findIndex((a) => a.kind === "take" && a.cards[0] === name);
      if (i >= 0) {
        c.classList.add("clickable");
        c.title = "take " + name;
        c.addEventListener("click", () => act(i));
      }
    }
    pile.appendChild(c);
  }
  const hand = $("hand");
  hand.replaceChildren();
  for (const name of view.hand) {
    const c = card(name);
    if (view.phase === "discard") {
      c.classList.add("clickable");
      c.addEventListener("click", () => {
        if (chosen.has(name)) chosen.delete(name); else chosen.add(name);
        c.classList.toggle("chosen", chosen.has(name));
        actions();
      });
    }
    hand.appendChild(c);
  }
  actions();
  const events = $("events");
  events.replaceChildren();
  for (const line of view.events) {
    events.appendChild(el("li", line.startsWith("round ") ? "round" : "", line));
  }
  events.scrollTop = events.scrollHeight;
  fillResults($("results"), view.results);
}

// The legal discard made of the chosen cards, if any.
function chosenDiscard() {
  return view.legal.findIndex(
    (a) => a.kind === "discard" && a.cards.length === chosen.size && a.cards.every((c) => chosen.has(c)),
  );
}

function actions() {
  const bar = $("actions");
  bar.replaceChildren();
  const button = (text, i, primary) => {
    const b = el("button", primary ? "primary" : "", text);
    b.disabled = i < 0 || busy;
    b.addEventListener("click", () => act(i));
    bar.appendChild(b);
    return b;
  };
  if (view.phase === "call") {
    view.legal.forEach((a, i) => button(a.text === "call" ? "Call Jhyap" : "Play on", i, a.text === "call"));
  } else if (view.phase === "discard") {
    const i = chosenDiscard();
    const b = button(chosen.size ? "Discard " + [...chosen].join(" ") : "Discard", i, true);
    b.id = "discard";
    if (chosen.size && i < 0) bar.appendChild(el("span", "label", "not a legal discard"));
  } else {
    const i = view.legal.findIndex((a) => a.kind === "draw");
    button("Draw from the stock", i, false).id = "draw";
  }
}

async function act(index) {
  if (busy || index < 0) return;
  busy = true;
  actions();
  try {
    const r = await api("POST", "/api/participants/" + encodeURIComponent(me.code) + "/action", { seq: view.seq, action: index }, me.token);
    busy = false;
    show(r.state);
  } catch (e) {
    busy = false;
    showError(e.message);
    if (e.status === 401) return signIn(me.code);
    if (e.status === 409) {
      const r = await api("GET", "/api/participants/" + encodeURIComponent(me.code) + "/state", undefined, me.token);
      show(r.state);
    } else {
      actions();
    }
  }
}

async function askHint() {
  const box = $("hint");
  try {
    const r = await api("POST", "/api/participants/" + encodeURIComponent(me.code) + "/hint", { seq: view.seq }, me.token);
    const h = r.hint;
    box.replaceChildren();
    if (h.error) {
      box.appendChild(el("div", "", "No hint: " + h.error));
    } else {
      box.appendChild(el("div", "", "The advisor (" + h.advisor + ") would " + h.action + "."));
      if (h.candidates.length) {
        const list = el("ol");
        for (const c of h.candidates) list.appendChild(el("li", "", c.action + " (" + h.score + " " + c.score.toFixed(2) + ")"));
        box.appendChild(list);
      }
      const a = h.choice === null ? null : view.legal[h.choice];
      for (const c of document.querySelectorAll("#hand .card, #pile .card")) {
        c.classList.toggle("hinted", !!a && a.cards.includes(c.dataset.card));
      }
    }
    box.hidden = false;
  } catch (e) {
    showError(e.message);
  }
}

start().finally(() => {
  document.body.dataset.ready = "1";
});
