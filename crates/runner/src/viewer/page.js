// The replay viewer of dhumbal-run's decision traces (docs/traces.md): plain JavaScript, no
// library, no network. The traces are the JSON of the element #replay-data: {traces: [{file,
// events, cut?: {rounds, bytes}: only its first rounds are here}], omitted: [file names left
// out of the page]}. Each trace is turned into steps
// (a deal, each decision, each round's end, the game's end), each with the table as it then
// is, rebuilt from the events alone: a deal sets the hands, the pile and the stock; a discard
// moves cards from the hand onto the pile; a pick from the pile moves a card back; a `drew`
// event brings the drawn card; a reshuffle rebuilds the pile; a round's end shows every hand.
// What is rebuilt is checked against each decision's view (what the deciding seat saw), and
// any difference is counted in the body's data-mismatches attribute (and told on the console).
"use strict";

(function () {
  const DATA = JSON.parse(document.getElementById("replay-data").textContent);
  const $ = (id) => document.getElementById(id);

  // ---------------------------------------------------------------- text and cards

  function esc(text) {
    return String(text)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;");
  }

  const RED = new Set(["♥", "♦"]);

  function parseCard(text) {
    if (text.startsWith("Jk")) return { rank: "Jk", suit: "★", cls: "joker" };
    const suit = text.slice(-1);
    return { rank: text.slice(0, -1), suit, cls: RED.has(suit) ? "red" : "black" };
  }

  // A small card face; `extra` adds classes (chosen, fresh, pickable, known, ...).
  function cardHtml(text, extra) {
    const c = parseCard(text);
    return (
      `<span class="card ${c.cls} ${extra || ""}" title="${esc(text)}">` +
      `<span class="rank">${esc(c.rank)}</span><span class="suit">${c.suit}</span></span>`
    );
  }

  function backHtml(extra) {
    return `<span class="card back ${extra || ""}" title="face down"></span>`;
  }

  // A choice's text ("discard 9♥ 9♠") with its cards coloured.
  function inlineCards(text) {
    return esc(text).replace(/(10|[2-9AJQK])([♥♦♣♠])|Jk\d/g, (m, rank, suit) => {
      const cls = !suit ? "joker" : RED.has(suit) ? "red" : "black";
      return `<span class="ic ${cls}">${m}</span>`;
    });
  }

  function fmtNum(x) {
    if (x === null || x === undefined) return "—";
    if (typeof x !== "number") return esc(x);
    if (Number.isInteger(x)) return x.toLocaleString("en-US");
    const a = Math.abs(x);
    return x.toFixed(a >= 1000 ? 0 : a >= 100 ? 1 : a >= 1 ? 3 : 4);
  }

  function fmtSigned(x) {
    if (x === null || x === undefined) return "—";
    return x > 0 ? `+${fmtNum(x)}` : x < 0 ? `−${fmtNum(-x)}` : "0";
  }

  // Whether a round's change is good or bad for the seat: coins won are good, points are
  // penalties (a failed caller's +29 is bad), whatever the sign.
  function tone(m, x) {
    if (!x) return "";
    const gain = m.game.scoring === "points" ? x < 0 : x > 0;
    return gain ? "good" : "bad";
  }

  function fmtNs(ns) {
    if (typeof ns !== "number") return "";
    if (ns < 1e3) return `${ns} ns`;
    if (ns < 1e6) return `${(ns / 1e3).toFixed(1)} µs`;
    if (ns < 1e9) return `${(ns / 1e6).toFixed(1)} ms`;
    return `${(ns / 1e9).toFixed(2)} s`;
  }

  const END_NAMES = {
    call: "a call",
    empty_hand: "an empty hand",
    turn_limit: "the turn limit",
    stock_exhausted: "an exhausted stock",
  };

  // ---------------------------------------------------------------- the steps of a trace

  function removeOne(list, card) {
    const i = list.lastIndexOf(card);
    if (i >= 0) list.splice(i, 1);
    return i >= 0;
  }

  const sorted = (cards) => cards.slice().sort().join(" ");
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

  // A choice as the page uses it, from how the trace says it ("discard 9♥ 9♠", "take 5♦",
  // "draw", "call", "play on").
  function parseChoice(text) {
    if (text === "call") return { kind: "call", call: true, text };
    if (text === "play on") return { kind: "call", call: false, text };
    if (text === "draw") return { kind: "pick", card: null, text };
    if (text.startsWith("take ")) return { kind: "pick", card: text.slice(5), text };
    if (text.startsWith("discard ")) return { kind: "discard", cards: text.slice(8).split(" "), text };
    return { kind: "other", text };
  }

  // A decision with its choices spelled out: the trace gives the legal choices as text, and the
  // choice and each candidate's as an index among them.
  function expand(ev) {
    if (ev.event !== "decision") return ev;
    const legal = ev.legal.map(parseChoice);
    const of = (c) => (typeof c === "number" ? legal[c] || parseChoice(`#${c}`) : parseChoice(String(c)));
    const explanation = ev.explanation && {
      ...ev.explanation,
      candidates: ev.explanation.candidates.map((c) => ({ ...c, choice: of(c.choice) })),
    };
    return { ...ev, legal, choice: of(ev.choice), explanation };
  }

  function build(trace) {
    const events = trace.events.map(expand);
    const game = events[0];
    const n = game.players;
    const steps = [];
    const rounds = []; // {round, start, end}: the steps of each round
    const mismatches = [];
    let st = null; // the table now
    let log = []; // what happened since the last step: {text, hidden?, seat?}
    let lastDecision = null;
    let lastEnd = null;

    const snapshot = () => ({
      round: st.round,
      turn: st.turn,
      hands: st.hands.map((h) => h.slice()),
      pile: st.pile.slice(),
      stock: st.stock,
      standings: st.standings.slice(),
      active: st.active.slice(),
      known: st.known.map((k) => k.slice()),
      fresh: st.fresh,
      topSet: st.topSet,
      lastDiscard: st.lastDiscard,
      starter: st.starter,
      threshold: st.threshold,
    });

    const push = (step) => {
      step.log = log;
      log = [];
      steps.push(step);
      if (rounds.length) rounds[rounds.length - 1].end = steps.length - 1;
    };

    // Compares the table as rebuilt with what a decision's seat saw.
    const check = (ev) => {
      const v = ev.view;
      const where = `round ${ev.round}, turn ${ev.turn}, seat ${ev.seat} (${ev.phase})`;
      if (sorted(st.hands[ev.seat]) !== sorted(v.hand))
        mismatches.push(`${where}: hand ${st.hands[ev.seat].join(" ")} but the view has ${v.hand.join(" ")}`);
      if (st.pile.length !== v.pile_size)
        mismatches.push(`${where}: pile ${st.pile.join(" ")} but the view has ${v.pile_size} cards`);
      for (const card of v.pickable)
        if (!st.pile.includes(card)) mismatches.push(`${where}: ${card} may be taken but is not on the pile`);
      if (st.stock !== v.stock) mismatches.push(`${where}: stock ${st.stock} but the view has ${v.stock}`);
      if (!same(st.hands.map((h) => h.length), v.hand_sizes))
        mismatches.push(`${where}: hand sizes ${st.hands.map((h) => h.length)} but the view has ${v.hand_sizes}`);
    };

    events.forEach((ev, i) => {
      switch (ev.event) {
        case "deal": {
          // Who starts, who is still in and the call threshold: from the round's first decision.
          const first = events.find((e, j) => j > i && e.event === "decision" && e.round === ev.round);
          st = {
            round: ev.round,
            turn: 0,
            hands: ev.hands.map((h) => h.slice()),
            pile: ev.pile.slice(),
            stock: ev.stock,
            standings: ev.standings.slice(),
            active: ev.active ? ev.active.slice() : ev.hands.map(() => true),
            known: ev.hands.map(() => []),
            fresh: null,
            topSet: first ? first.view.top_set : ev.pile.length ? 1 : 0,
            lastDiscard: null,
            starter: first ? first.view.starter : null,
            threshold: first ? first.view.call_threshold : null,
          };
          rounds.push({ round: ev.round, start: steps.length, end: steps.length });
          const up = ev.pile.length ? `, ${ev.pile[ev.pile.length - 1]} face up` : "";
          log.push({ text: `Round ${ev.round} dealt${up}, ${ev.stock} cards in the stock.` });
          push({ kind: "deal", ev, state: snapshot() });
          break;
        }
        case "decision": {
          if (!st) break;
          const v = ev.view;
          check(ev);
          // The view is the truth: show it even where the rebuilt table would differ.
          st.hands[ev.seat] = v.hand.slice();
          st.stock = v.stock;
          st.topSet = v.top_set;
          st.known = v.known.map((k) => k.slice());
          st.turn = ev.turn;
          st.starter = v.starter;
          st.threshold = v.call_threshold;
          push({ kind: "decision", ev, state: snapshot() });
          lastDecision = ev;
          const s = ev.seat;
          const c = ev.choice;
          if (c.kind === "call") {
            log.push({ text: c.call ? `Seat ${s} calls with ${v.hand_value}.` : `Seat ${s} plays on.` });
          } else if (c.kind === "discard") {
            for (const card of c.cards) {
              if (!removeOne(st.hands[s], card))
                mismatches.push(`round ${ev.round}, turn ${ev.turn}: seat ${s} discards ${card}, not in its hand`);
              removeOne(st.known[s], card);
              st.pile.push(card);
            }
            st.lastDiscard = { seat: s, cards: c.cards.slice() };
            st.fresh = null;
            log.push({ text: `Seat ${s} discards ${c.cards.join(" ")}.` });
          } else if (c.kind === "pick" && c.card) {
            if (!removeOne(st.pile, c.card))
              mismatches.push(`round ${ev.round}, turn ${ev.turn}: seat ${s} takes ${c.card}, not on the pile`);
            st.hands[s].push(c.card);
            st.known[s].push(c.card);
            st.fresh = { seat: s, card: c.card };
            if (st.lastDiscard) st.topSet = st.lastDiscard.cards.length;
            log.push({ text: `Seat ${s} takes ${c.card} from the pile.` });
          }
          break;
        }
        case "drew": {
          if (!st) break;
          if (ev.card) st.hands[ev.seat].push(ev.card);
          st.stock = ev.stock;
          st.fresh = ev.card ? { seat: ev.seat, card: ev.card } : null;
          if (st.lastDiscard) st.topSet = st.lastDiscard.cards.length;
          log.push({
            seat: ev.seat,
            text: `Seat ${ev.seat} draws ${ev.card || "a card"} from the stock.`,
            hidden: `Seat ${ev.seat} draws from the stock.`,
          });
          break;
        }
        case "reshuffle": {
          if (!st) break;
          st.pile = ev.pile.slice();
          st.stock = ev.stock;
          log.push({ text: `The pile is turned over and shuffled: ${ev.stock} cards in the stock again.` });
          break;
        }
        case "round_end": {
          if (!st) break;
          st.hands = ev.hands.map((h) => h.slice());
          st.standings = ev.standings.slice();
          if (ev.eliminated) st.active = st.active.map((a, seat) => a && !ev.eliminated[seat]);
          st.fresh = null;
          lastEnd = ev;
          push({ kind: "end", ev, state: snapshot(), lastDecision });
          break;
        }
        case "game_end": {
          if (!st) break;
          st.standings = ev.standings.slice();
          push({ kind: "game", ev, state: snapshot(), lastDecision, lastEnd });
          break;
        }
        default:
          break;
      }
    });
    return { game, n, steps, rounds, mismatches, file: trace.file };
  }

  // ---------------------------------------------------------------- the page's state

  const models = new Map(); // trace index -> built steps, built when first shown
  const ui = { trace: 0, step: 0, view: null }; // view: null (everyone) or a seat

  function model() {
    if (!models.has(ui.trace)) models.set(ui.trace, build(DATA.traces[ui.trace]));
    return models.get(ui.trace);
  }

  function roundIndex(m, step) {
    const i = m.rounds.findIndex((r) => step >= r.start && step <= r.end);
    return i < 0 ? 0 : i;
  }

  function go(step) {
    const m = model();
    ui.step = Math.max(0, Math.min(m.steps.length - 1, step));
    render();
  }

  function roundBack() {
    const m = model();
    const r = roundIndex(m, ui.step);
    const start = m.rounds[r] ? m.rounds[r].start : 0;
    go(ui.step > start || r === 0 ? start : m.rounds[r - 1].start);
  }

  function roundForward() {
    const m = model();
    const r = roundIndex(m, ui.step);
    go(r + 1 < m.rounds.length ? m.rounds[r + 1].start : m.steps.length - 1);
  }

  // ---------------------------------------------------------------- rendering

  const agentOf = (m, seat) => (m.game.seats[seat] ? m.game.seats[seat].agent : `seat ${seat}`);
  const seatName = (m, seat) => `seat ${seat} (${esc(agentOf(m, seat))})`;
  const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);
  const unit = (m) => (m.game.scoring === "points" ? "points" : "coins");

  function seatHtml(m, step, seat, pos) {
    const s = step.state;
    const ev = step.ev;
    const ended = step.kind === "end" || step.kind === "game";
    const end = step.kind === "end" ? ev : step.kind === "game" ? step.lastEnd : null;
    const deciding = step.kind === "decision" && ev.seat === seat;
    const visible = ended || ui.view === null || ui.view === seat;
    const hand = s.hands[seat] || [];
    const chosen = deciding && ev.choice.kind === "discard" ? ev.choice.cards.slice() : [];
    const known = s.known[seat] || [];
    const cards = hand
      .map((card) => {
        const marks = [];
        if (chosen.includes(card)) {
          marks.push("chosen");
          chosen.splice(chosen.indexOf(card), 1);
        }
        const fresh = s.fresh && s.fresh.seat === seat && s.fresh.card === card;
        if (visible) {
          if (fresh) marks.push("fresh");
          return cardHtml(card, marks.join(" "));
        }
        if (known.includes(card)) return cardHtml(card, `known ${marks.join(" ")}`);
        return backHtml(marks.join(" "));
      })
      .join("");
    let value = "";
    if (ended && end) value = `value ${end.hand_values[seat]}`;
    else if (deciding && (ui.view === null || ui.view === seat)) value = `value ${ev.view.hand_value}`;
    const badges = [];
    if (deciding) badges.push(`<span class="badge play">to play</span>`);
    if (s.starter === seat && !ended) badges.push(`<span class="badge">starts</span>`);
    if (!s.active[seat]) badges.push(`<span class="badge out">out</span>`);
    if (ended && end) {
      if (end.caller === seat)
        badges.push(`<span class="badge ${end.call_success ? "win" : "lose"}">${end.call_success ? "called" : "call failed"}</span>`);
      if (end.winner === seat) badges.push(`<span class="badge win">won</span>`);
    }
    if (step.kind === "game" && ev.winner === seat)
      badges.push(`<span class="badge champion">${m.game.scoring === "points" ? "game" : "session"} winner</span>`);
    if (ui.view === seat) badges.push(`<span class="badge you">viewing</span>`);
    const change =
      ended && end && end.change
        ? ` <span class="change ${tone(m, end.change[seat])}">${fmtSigned(end.change[seat])}</span>`
        : "";
    const cls = ["seat", deciding ? "to-play" : "", s.active[seat] ? "" : "out", pos.up ? "grows-up" : ""].join(" ");
    return (
      `<div class="${cls}" data-seat="${seat}" style="left:${pos.x}%;top:${pos.y}%">` +
      `<div class="seat-head"><span class="seat-name">Seat ${seat}</span> <span class="agent">${esc(agentOf(m, seat))}</span> ${badges.join(" ")}</div>` +
      `<div class="hand">${cards || '<span class="empty">no cards</span>'}</div>` +
      `<div class="seat-foot"><span class="standing">${fmtNum(s.standings[seat])} ${unit(m)}</span>${change}` +
      `<span class="value">${value}</span></div>` +
      `</div>`
    );
  }

  // Seat positions around the table: the viewing seat (or seat 0) at the bottom, then in
  // playing order clockwise.
  function positions(n) {
    const bottom = ui.view === null ? 0 : ui.view;
    const out = [];
    for (let seat = 0; seat < n; seat++) {
      const k = (seat - bottom + n) % n;
      const a = Math.PI / 2 + (2 * Math.PI * k) / n;
      // A seat up at a side (not the top one) grows upwards, away from the pile below it,
      // when badges or its end of game take it a second line.
      const up = Math.sin(a) < -0.2 && Math.sin(a) > -0.95;
      out[seat] = { x: 50 + 35 * Math.cos(a), y: 50 + 38 * Math.sin(a), up };
    }
    return out;
  }

  function centreHtml(step) {
    const s = step.state;
    const ev = step.ev;
    const pick = step.kind === "decision" && ev.phase === "pick" ? ev : null;
    const pickable = pick ? pick.view.pickable.slice() : [];
    const taken = pick && pick.choice.card;
    const shown = 8;
    const pile = s.pile;
    const from = Math.max(0, pile.length - shown);
    const top = Math.min(s.topSet || 0, pile.length);
    const cards = pile
      .slice(from)
      .map((card, j) => {
        const i = from + j;
        const marks = [];
        if (pick) {
          if (pickable.includes(card) && i >= pile.length - pick.view.discarded.length - (pick.view.top_set || 0)) {
            marks.push("pickable");
            if (taken === card) marks.push("chosen");
          }
        } else if (i >= pile.length - top) {
          marks.push("top-set");
        }
        return cardHtml(card, marks.join(" "));
      })
      .join("");
    const below = from > 0 ? `<span class="below">+${from}</span>` : "";
    const drawing = pick && !pick.choice.card;
    const pileLabel = pick
      ? `${pickable.length} pickable`
      : top
        ? `top set: ${top} card${top === 1 ? "" : "s"}`
        : "";
    return (
      `<div class="centre">` +
      `<div class="heap"><div class="pile">${below}${cards || '<span class="empty">empty</span>'}</div>` +
      `<div class="label">pile · ${pile.length} card${pile.length === 1 ? "" : "s"}${pileLabel ? ` · ${pileLabel}` : ""}</div></div>` +
      `<div class="heap"><div class="stock ${drawing ? "chosen" : ""}">${s.stock > 0 ? backHtml("big") : '<span class="empty">empty</span>'}` +
      `<span class="count">${s.stock}</span></div><div class="label">stock</div></div>` +
      `</div>`
    );
  }

  function candidatesHtml(ev) {
    const e = ev.explanation;
    const agent = esc(ev.agent);
    if (!e) return `<p class="muted no-explanation">no explanation (${agent} gives none)</p>`;
    const names = [];
    for (const c of e.candidates) for (const k of Object.keys(c.details || {})) if (!names.includes(k)) names.push(k);
    const rows = e.candidates
      .map((c, i) => {
        const chosen = c.choice.text === ev.choice.text;
        const details = names.map((k) => `<td class="num">${fmtNum(c.details ? c.details[k] : null)}</td>`).join("");
        return (
          `<tr class="${chosen ? "chosen" : ""}"><td class="mark">${chosen ? "✔" : i + 1}</td>` +
          `<td class="choice-cell">${inlineCards(c.choice.text)}</td><td class="num">${fmtNum(c.score)}</td>${details}</tr>`
        );
      })
      .join("");
    const head =
      `<tr><th></th><th>choice</th><th class="num">score</th>` +
      names.map((k) => `<th class="num">${esc(k)}</th>`).join("") +
      `</tr>`;
    const table = e.candidates.length
      ? (e.score ? `<div class="score-meaning">score: ${esc(e.score)}</div>` : "") +
        `<div class="scroll"><table class="cands"><thead>${head}</thead><tbody>${rows}</tbody></table></div>`
      : `<p class="muted">no candidates listed</p>`;
    const notes = (e.notes || []).length ? `<ul class="notes">${e.notes.map((t) => `<li>${esc(t)}</li>`).join("")}</ul>` : "";
    return table + notes;
  }

  function decisionHtml(m, ev, title) {
    const hidden = ui.view !== null && ui.view !== ev.seat;
    const v = ev.view;
    const facts = [];
    if (!hidden) facts.push(`hand value ${v.hand_value}`);
    if (ev.phase === "call") facts.push(`call threshold ${v.call_threshold}`);
    if (ev.phase === "pick") facts.push(`pickable ${v.pickable.length ? v.pickable.map(inlineCards).join(" ") : "none"}`);
    facts.push(`stock ${v.stock}`);
    const legal = (ev.legal || []).map((c) => `<li>${inlineCards(c.text)}${c.text === ev.choice.text ? " ✔" : ""}</li>`).join("");
    const body = hidden
      ? `<p class="muted hidden-note">Seat ${ev.seat}'s hand and candidates are hidden in seat ${ui.view}'s view.</p>`
      : candidatesHtml(ev) + `<details class="legal"><summary>all ${ev.legal.length} legal choices</summary><ul>${legal}</ul></details>`;
    return (
      `<h2>${title} <small>round ${ev.round} · turn ${ev.turn}</small></h2>` +
      `<div class="who"><b>Seat ${ev.seat}</b> · ${esc(agentOf(m, ev.seat))} ` +
      `<span class="phase phase-${ev.phase}">${ev.phase}</span> <span class="muted">${ev.legal.length} legal</span></div>` +
      `<div class="chose">chose <b class="choice">${inlineCards(ev.choice.text)}</b>` +
      `<span class="muted time">${ev.ns !== undefined ? ` in ${fmtNs(ev.ns)}` : ""}</span></div>` +
      `<div class="facts muted">${facts.join(" · ")}</div>` +
      body
    );
  }

  function outcomeHtml(m, end, state) {
    const who = (seat) => (seat === null || seat === undefined ? "nobody" : seatName(m, seat));
    let verdict;
    if (end.end === "call") {
      verdict = `${capital(who(end.caller))} called: <b class="${end.call_success ? "good" : "bad"}">${end.call_success ? "success" : "failed"}</b>.`;
    } else if (end.end === "empty_hand") {
      verdict = `${capital(who(end.winner))} emptied the hand.`;
    } else {
      verdict = `Ended by ${END_NAMES[end.end] || esc(end.end)}.`;
    }
    const rows = end.hands
      .map((hand, seat) => {
        const cls = end.winner === seat ? "winner" : "";
        const change = end.change ? end.change[seat] : null;
        const out = end.eliminated && end.eliminated[seat] ? ' <span class="badge out">eliminated</span>' : "";
        return (
          `<tr class="${cls}"><td>${seat} · ${esc(agentOf(m, seat))}${out}</td>` +
          `<td class="hand-cell">${hand.map((c) => cardHtml(c, "mini")).join("")}</td>` +
          `<td class="num">${end.hand_values[seat]}</td>` +
          `<td class="num change ${tone(m, change)}">${fmtSigned(change)}</td>` +
          `<td class="num">${fmtNum(end.standings[seat])}</td></tr>`
        );
      })
      .join("");
    return (
      `<h2>Round ${end.round} ends by ${END_NAMES[end.end] || esc(end.end)} <small>after ${end.turns} turns</small></h2>` +
      `<p class="verdict">${verdict} Winner: <b>${who(end.winner)}</b>.</p>` +
      `<table class="result"><thead><tr><th>seat</th><th>hand</th><th class="num">value</th>` +
      `<th class="num">change</th><th class="num">${unit(m)}</th></tr></thead><tbody>${rows}</tbody></table>`
    );
  }

  function gameHtml(m, ev) {
    const what = m.game.scoring === "points" ? "Game" : "Session";
    const winner = ev.winner === null || ev.winner === undefined ? "nobody" : seatName(m, ev.winner);
    return (
      `<h2>${what} over <small>after ${ev.rounds} round${ev.rounds === 1 ? "" : "s"}</small></h2>` +
      `<p class="verdict">Winner: <b>${winner}</b> with ${fmtNum(ev.standings[ev.winner])} ${unit(m)}.</p>`
    );
  }

  function dealHtml(m, step) {
    const s = step.state;
    const ev = step.ev;
    const starter = s.starter === null || s.starter === undefined ? "" : ` ${capital(seatName(m, s.starter))} plays first.`;
    const threshold = s.threshold === null || s.threshold === undefined ? "" : ` Calls allowed at ${s.threshold} or less.`;
    return (
      `<h2>Round ${ev.round} dealt <small>${m.n} seats</small></h2>` +
      `<p>${ev.hands.map((h) => h.length)[0]} cards each, one face up on the pile, ${ev.stock} in the stock.${starter}${threshold}</p>` +
      `<p class="muted">Step forward (→) to the first decision.</p>`
    );
  }

  function render() {
    const m = model();
    const step = m.steps[ui.step];
    const g = m.game;
    document.title = `Replay: ${g.stage}, deal ${g.deal}, arrangement ${g.arrangement}`;
    $("title").textContent = `Dhumbal replay · ${g.stage}`;
    const seats = g.seats.map((s) => `${s.seat}: ${esc(s.agent)}`).join(" · ");
    const seed = g.seed !== undefined ? ` · seed ${g.seed}` : "";
    $("subtitle").innerHTML =
      `deal ${g.deal} · arrangement ${g.arrangement} · ${esc(g.rules)} rules · ${g.players} players · ${esc(g.scoring)}${seed}` +
      `<br>seats ${seats}`;
    const body = document.body.dataset;
    body.trace = String(ui.trace);
    body.step = String(ui.step);
    body.steps = String(m.steps.length);
    body.mismatches = String(m.mismatches.length);
    if (m.mismatches.length && !m.warned) {
      m.warned = true;
      console.warn(`replay: the rebuilt table differs from the views:\n${m.mismatches.join("\n")}`);
    }
    if (!step) {
      $("felt").innerHTML = `<div class="centre"><span class="empty">this trace has no round</span></div>`;
      $("position").textContent = "";
      return;
    }
    const pos = positions(m.n);
    $("felt").innerHTML = centreHtml(step) + m.game.seats.map((_, seat) => seatHtml(m, step, seat, pos[seat])).join("");

    const r = roundIndex(m, ui.step);
    const turn = step.state.turn ? ` · turn ${step.state.turn}` : "";
    $("position").textContent = `step ${ui.step + 1} of ${m.steps.length} · round ${m.rounds[r] ? m.rounds[r].round : r}${m.rounds.length > 1 ? ` of 0–${m.rounds.length - 1}` : ""}${turn}`;
    const scrub = $("scrub");
    scrub.max = String(m.steps.length - 1);
    scrub.value = String(ui.step);
    $("step-back").disabled = ui.step === 0;
    $("round-back").disabled = ui.step === 0;
    $("step-forward").disabled = ui.step === m.steps.length - 1;
    $("round-forward").disabled = ui.step === m.steps.length - 1;

    const lines = step.log.map((l) => {
      const hide = l.hidden && ui.view !== null && ui.view !== l.seat;
      return `<li>${inlineCards(hide ? l.hidden : l.text)}</li>`;
    });
    $("log").innerHTML = lines.length ? `<span class="muted">Just happened:</span><ul>${lines.join("")}</ul>` : "";

    const decision = $("decision");
    const outcome = $("outcome");
    if (step.kind === "decision") {
      decision.innerHTML = decisionHtml(m, step.ev, "Decision");
    } else if (step.kind === "deal") {
      decision.innerHTML = dealHtml(m, step);
    } else if (step.lastDecision) {
      decision.innerHTML = decisionHtml(m, step.lastDecision, "Last decision");
    } else {
      decision.innerHTML = `<h2>Decision</h2><p class="muted">no decision in this round</p>`;
    }
    if (step.kind === "end") {
      outcome.innerHTML = outcomeHtml(m, step.ev, step.state);
    } else if (step.kind === "game") {
      outcome.innerHTML = gameHtml(m, step.ev) + (step.lastEnd ? outcomeHtml(m, step.lastEnd, step.state) : "");
    } else {
      outcome.innerHTML = "";
    }
    outcome.hidden = !outcome.innerHTML;
    saveHash();
  }

  // ---------------------------------------------------------------- pickers, keys, address

  function fillTracePicker() {
    const select = $("trace");
    select.innerHTML = DATA.traces
      .map((t, i) => {
        const g = t.events[0] || {};
        const agents = (g.seats || []).map((s) => s.agent).join(", ");
        const stage = DATA.traces.some((u) => (u.events[0] || {}).stage !== g.stage) ? `${g.stage}: ` : "";
        return `<option value="${i}">${esc(stage)}deal ${g.deal}, arrangement ${g.arrangement} (${esc(agents)})</option>`;
      })
      .join("");
    select.value = String(ui.trace);
    $("trace-picker").hidden = DATA.traces.length < 2;
  }

  function fillViewPicker() {
    const m = model();
    const select = $("view");
    select.innerHTML =
      `<option value="all">everyone (all hands)</option>` +
      m.game.seats.map((s) => `<option value="${s.seat}">seat ${s.seat}: ${esc(s.agent)}</option>`).join("");
    if (ui.view !== null && ui.view >= m.n) ui.view = null;
    select.value = ui.view === null ? "all" : String(ui.view);
  }

  function saveHash() {
    const hash = `#trace=${ui.trace}&step=${ui.step}&view=${ui.view === null ? "all" : ui.view}`;
    try {
      history.replaceState(null, "", hash);
    } catch (_) {
      // Some browsers refuse it for file:// pages: the address then stays as it was.
    }
  }

  function loadHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    const t = Number(p.get("trace"));
    if (Number.isInteger(t) && t >= 0 && t < DATA.traces.length) ui.trace = t;
    const v = p.get("view");
    if (v !== null && v !== "all" && Number.isInteger(Number(v))) ui.view = Number(v);
    const s = Number(p.get("step"));
    if (Number.isInteger(s) && s >= 0) ui.step = s;
  }

  // How far the table may be zoomed: out to 0.6, where its smallest text (11 px) stays above
  // browsers' smallest (6 px; a narrower window scrolls), and in to 1.2, where a wide screen
  // still shows the controls below it.
  const FELT_ZOOM = [0.6, 1.2];

  // Zooms the table (laid out at its size in page.css, which neither zoom nor scale changes
  // for offsetWidth) to fill its column, whenever the column's width changes (watched on an
  // element of no height, which the zoom does not resize). A browser without CSS zoom
  // (Firefox before 126) gets the same by a scale, with the box given the scaled height and
  // the table centred.
  function fitTable() {
    const box = $("felt-width");
    const felt = $("felt");
    const zoomed = !window.CSS || !CSS.supports || CSS.supports("zoom", "1");
    const fit = () => {
      const width = felt.offsetWidth;
      const z = Math.min(Math.max(box.clientWidth / width, FELT_ZOOM[0]), FELT_ZOOM[1]);
      if (zoomed) {
        felt.style.zoom = String(z);
      } else {
        felt.style.transformOrigin = "top left";
        felt.style.transform = `scale(${z})`;
        felt.style.marginLeft = `${Math.max((box.clientWidth - width * z) / 2, 0)}px`;
        $("felt-box").style.height = `${felt.offsetHeight * z}px`;
      }
    };
    fit();
    if (typeof ResizeObserver === "function") {
      new ResizeObserver(fit).observe(box);
    } else {
      window.addEventListener("resize", fit);
    }
  }

  function start() {
    fitTable();
    if (!DATA.traces.length) {
      $("felt").innerHTML = `<div class="centre"><span class="empty">no trace in this page</span></div>`;
      return;
    }
    loadHash();
    fillTracePicker();
    fillViewPicker();
    for (const t of DATA.traces.filter((t) => t.cut)) {
      const g = t.events[0];
      const note = document.createElement("p");
      note.className = "omitted";
      note.textContent =
        `${t.file}: its first ${t.cut.rounds} round${t.cut.rounds === 1 ? "" : "s"} only, the whole trace ` +
        `(${(t.cut.bytes / 1048576).toFixed(0)} MiB) being too large for this page; ` +
        `\`dhumbal-run show RUN_DIR --deal ${g.deal} --arrangement ${g.arrangement} --html FILE\` ` +
        `(with \`--stage ${g.stage}\` in a run of several stages) writes a page of it alone, ` +
        `and \`--round N\` instead of \`--html\` shows any round in the terminal`;
      document.querySelector("footer").appendChild(note);
    }
    if (DATA.omitted && DATA.omitted.length) {
      const note = document.createElement("p");
      note.className = "omitted";
      note.textContent =
        `${DATA.omitted.length} more trace${DATA.omitted.length === 1 ? " is" : "s are"} too large for this page ` +
        `(show them with \`dhumbal-run show --html FILE\`): ${DATA.omitted.join(", ")}`;
      document.querySelector("footer").appendChild(note);
    }
    $("trace").addEventListener("change", (e) => {
      ui.trace = Number(e.target.value);
      ui.step = 0;
      fillViewPicker();
      e.target.blur();
      render();
    });
    $("view").addEventListener("change", (e) => {
      ui.view = e.target.value === "all" ? null : Number(e.target.value);
      e.target.blur();
      render();
    });
    $("step-back").addEventListener("click", () => go(ui.step - 1));
    $("step-forward").addEventListener("click", () => go(ui.step + 1));
    $("round-back").addEventListener("click", roundBack);
    $("round-forward").addEventListener("click", roundForward);
    $("scrub").addEventListener("input", (e) => go(Number(e.target.value)));
    document.addEventListener("keydown", (e) => {
      if (e.target instanceof HTMLSelectElement || e.altKey || e.ctrlKey || e.metaKey) return;
      switch (e.key) {
        case "ArrowRight":
          go(ui.step + 1);
          break;
        case "ArrowLeft":
          go(ui.step - 1);
          break;
        case "ArrowDown":
        case "PageDown":
          roundForward();
          break;
        case "ArrowUp":
        case "PageUp":
          roundBack();
          break;
        case "Home":
          go(0);
          break;
        case "End":
          go(model().steps.length - 1);
          break;
        default:
          return;
      }
      e.preventDefault();
    });
    go(ui.step);
    document.body.dataset.ready = "1";
  }

  start();
})();
