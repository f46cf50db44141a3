// The page of `camelot serve`: draws the game the server keeps and sends the person's moves.
// The server checks every move; the legal moves it sends let the page guide clicks and refuse
// an illegal one before asking. Plain script, no build step: it is embedded in the binary.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const CELL = 40;
const MARGIN = 26;

let info = null; // GET /api/info
let state = null; // the game as the server last sent it
let selection = []; // squares clicked so far: the origin, then landings
let busy = false; // a request is on its way

const $ = (id) => document.getElementById(id);

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  let data = null;
  try {
    data = await response.json();
  } catch (_) {
    data = { error: `the server answered ${response.status} without JSON` };
  }
  if (!response.ok) throw new Error(data.error || `the server answered ${response.status}`);
  return data;
}

// Board geometry: square names to SVG coordinates, the person's side at the bottom.
const fileOf = (name) => name.charCodeAt(0) - 65;
const rankOf = (name) => parseInt(name.slice(1), 10) - 1;
const flipped = () => state.human === "black";

function corner(name) {
  const { files, ranks } = state.board;
  const col = flipped() ? files - 1 - fileOf(name) : fileOf(name);
  const row = flipped() ? rankOf(name) : ranks - 1 - rankOf(name);
  return [MARGIN + col * CELL, MARGIN + row * CELL];
}

function center(name) {
  const [x, y] = corner(name);
  return [x + CELL / 2, y + CELL / 2];
}

function add(parent, tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  parent.appendChild(node);
  return node;
}

const pieceAt = (name) => state.pieces.find((p) => p.square === name);

// The legal moves that begin with the squares clicked so far.
const candidates = () => state.legal.filter((m) => selection.every((sq, i) => m.squares[i] === sq));

function say(text, error = false) {
  const message = $("message");
  message.textContent = text;
  message.className = error ? "error" : "";
}

function refuse(text, square) {
  say(text, true);
  if (square) {
    const [x, y] = corner(square);
    const flash = add($("board"), "rect", { x, y, width: CELL, height: CELL, class: "flash" });
    setTimeout(() => flash.remove(), 400);
  }
}

function select(name) {
  const piece = pieceAt(name);
  if (!piece) return refuse(`${name} is empty: click one of your pieces first.`, name);
  if (piece.color !== state.human) return refuse(`The piece on ${name} is not yours.`, name);
  if (!state.legal.some((m) => m.squares[0] === name)) {
    const capture = state.legal.length > 0 && state.legal.every((m) => m.jumps.some((j) => j));
    return refuse(`The piece on ${name} has no legal move${capture ? " (a capture is compulsory)" : ""}.`, name);
  }
  selection = [name];
  say(`Piece on ${name}: click where it goes.`);
  render();
}

function onSquare(name) {
  if (!state || busy) return;
  if (state.status !== "human") {
    return say(state.status === "over" ? "The game is over: start a new one." : "Wait for the engine's move.");
  }
  if (selection.length === 0) return select(name);
  const moves = candidates();
  const last = selection[selection.length - 1];
  if (name === last && selection.length > 1) {
    const done = moves.find((m) => m.squares.length === selection.length);
    if (done) return play(done.move);
  }
  const next = moves.filter((m) => m.squares[selection.length] === name);
  if (next.length > 0) {
    const prefix = selection.concat([name]);
    const exact = next.find((m) => m.squares.length === prefix.length);
    const longer = next.some((m) => m.squares.length > prefix.length);
    if (exact && !longer) return play(exact.move);
    selection = prefix;
    say(exact ? `Click ${name} again to stop there, or click the next leg.` : "The move goes on: click the next leg.");
    return render();
  }
  const ending = moves.filter((m) => m.squares[m.squares.length - 1] === name);
  if (ending.length === 1) return play(ending[0].move);
  if (ending.length > 1) return say(`Several moves end on ${name}: click their legs one by one.`);
  if (name === selection[0]) {
    selection = [];
    say("");
    return render();
  }
  const piece = pieceAt(name);
  if (piece && piece.color === state.human && selection.length === 1) return select(name);
  refuse(`${name} is not a legal destination for the piece on ${selection[0]}.`, name);
}

async function play(move) {
  busy = true;
  selection = [];
  try {
    state = await api("POST", "/api/move", { game: state.game, move });
    say("");
  } catch (err) {
    refuse(err.message);
    busy = false;
    return render();
  }
  busy = false;
  render();
  await engineIfDue();
}

async function engineIfDue() {
  if (!state || state.status !== "engine") return;
  busy = true;
  render();
  try {
    state = await api("POST", "/api/reply", { game: state.game });
  } catch (err) {
    refuse(`The engine failed: ${err.message}`);
  }
  busy = false;
  render();
}

async function newGame() {
  busy = true;
  selection = [];
  try {
    state = await api("POST", "/api/new", { variant: $("variant").value, side: $("side").value, player: $("player").value });
    history.replaceState(null, "", `#game=${state.game}`);
    say("");
  } catch (err) {
    refuse(err.message);
  }
  busy = false;
  render();
  await engineIfDue();
}

function drawBoard() {
  const svg = $("board");
  svg.replaceChildren();
  const { files, ranks, squares, castles } = state.board;
  const width = files * CELL + 2 * MARGIN;
  const height = ranks * CELL + 2 * MARGIN;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  add(svg, "rect", { x: 0, y: 0, width, height, rx: 8, class: "frame" });
  const castle = new Set([...castles.white, ...castles.black]);
  const played = state.history.length ? state.history[state.history.length - 1].squares : [];
  for (const name of squares) {
    const [x, y] = corner(name);
    let cls = (fileOf(name) + rankOf(name)) % 2 === 0 ? "sq dark" : "sq light";
    if (castle.has(name)) cls += " castle";
    if (played.includes(name)) cls += " last";
    if (selection.includes(name)) cls += " selected";
    const rect = add(svg, "rect", { x, y, width: CELL, height: CELL, class: cls, "data-square": name });
    rect.addEventListener("click", () => onSquare(name));
    add(rect, "title", {}, name);
  }
  // Coordinates on all four sides.
  for (let f = 0; f < files; f++) {
    const letter = String.fromCharCode(65 + f);
    const [x] = center(`${letter}1`);
    add(svg, "text", { x, y: MARGIN / 2, class: "coord" }, letter);
    add(svg, "text", { x, y: height - MARGIN / 2, class: "coord" }, letter);
  }
  for (let r = 1; r <= ranks; r++) {
    const [, y] = center(`A${r}`);
    add(svg, "text", { x: MARGIN / 2, y, class: "coord" }, r);
    add(svg, "text", { x: width - MARGIN / 2, y, class: "coord" }, r);
  }
  if (played.length > 1) drawPath(svg, played, "path last");
  for (const piece of state.pieces) drawPiece(svg, piece);
  if (selection.length > 0) drawSelection(svg);
}

function drawPath(svg, squares, cls) {
  const points = squares.map((sq) => center(sq).join(",")).join(" ");
  add(svg, "polyline", { points, class: cls });
}

function drawPiece(svg, piece) {
  const [cx, cy] = center(piece.square);
  add(svg, "circle", { cx, cy, r: CELL * 0.38, class: `piece ${piece.color}`, "data-piece": `${piece.color} ${piece.role}` });
  if (piece.role === "knight") {
    // A crown marks the knight.
    const crown = [[-9, 5], [-9, -5], [-4.5, 0], [0, -8], [4.5, 0], [9, -5], [9, 5]];
    add(svg, "polygon", { points: crown.map(([x, y]) => `${cx + x},${cy + y}`).join(" "), class: `crown ${piece.color}` });
  }
}

// The legs clicked so far, where the next leg may land, and where the moves that go on end.
function drawSelection(svg) {
  if (selection.length > 1) drawPath(svg, selection, "path");
  const moves = candidates();
  const nexts = new Map();
  const ends = new Set();
  for (const m of moves) {
    if (m.squares.length > selection.length) nexts.set(m.squares[selection.length], m.jumps[selection.length - 1]);
    const end = m.squares[m.squares.length - 1];
    if (m.squares.length > selection.length + 1) ends.add(end);
  }
  for (const end of ends) {
    if (nexts.has(end)) continue;
    const [cx, cy] = center(end);
    add(svg, "circle", { cx, cy, r: CELL * 0.3, class: "dest" });
  }
  for (const [sq, jump] of nexts) {
    const [cx, cy] = center(sq);
    add(svg, "circle", { cx, cy, r: CELL * 0.14, class: jump ? "target jump" : "target", "data-target": sq });
  }
}

function describeReply(reply) {
  let text = `${reply.player} (${reply.color}) played ${reply.move}`;
  if (reply.evaluation) text += `; its evaluation: ${reply.evaluation} for ${reply.color}`;
  // Players that time themselves say so in their statistics; for the others the server's count.
  text += ` (${reply.info || `${reply.ms} ms`}).`;
  if (reply.line && reply.line !== reply.move) text += ` Expected line: ${reply.line}.`;
  return text;
}

function render() {
  if (!state) return;
  document.body.dataset.status = busy ? "busy" : state.status;
  drawBoard();
  const you = state.human === "white" ? "White" : "Black";
  let status;
  if (state.outcome) {
    const text = state.outcome.text;
    status = `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
  } else if (state.status === "engine") {
    status = `The engine (${state.player}) is thinking...`;
  } else {
    status = `Your move (${you}, move ${state.fullmove}).`;
  }
  $("status").textContent = status;
  $("reply").textContent = state.reply ? describeReply(state.reply) : "No move yet.";
  const list = $("moves");
  list.replaceChildren();
  for (let i = 0; i < state.history.length; i += 2) {
    const item = document.createElement("li");
    const pair = state.history.slice(i, i + 2).map((h) => h.move);
    item.textContent = pair.join("  ");
    list.appendChild(item);
  }
  list.scrollTop = list.scrollHeight;
  for (const id of ["variant", "side", "player"]) $(id).disabled = busy;
}

function fill(select, values, chosen) {
  select.replaceChildren();
  for (const value of values) {
    const option = document.createElement("option");
    option.value = value;
    option.textContent = value;
    select.appendChild(option);
  }
  select.value = chosen;
}

async function start() {
  $("new-game").addEventListener("submit", (event) => {
    event.preventDefault();
    if (!busy) newGame();
  });
  $("type-move").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("move-text").value.trim();
    if (!text || busy || !state) return;
    if (state.status !== "human") return say("It is not your move.");
    $("move-text").value = "";
    play(text);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && selection.length > 0) {
      selection = [];
      say("");
      render();
    }
  });
  try {
    info = await api("GET", "/api/info");
  } catch (err) {
    return refuse(`The server did not answer: ${err.message}`);
  }
  fill($("variant"), info.variants, info.variant);
  fill($("player"), info.players, info.players[0]);
  // A reload keeps its game; a new tab starts its own.
  const id = new URLSearchParams(location.hash.slice(1)).get("game");
  if (id) {
    try {
      state = await api("GET", `/api/state?game=${encodeURIComponent(id)}`);
      $("variant").value = state.variant;
      $("side").value = state.human;
      $("player").value = state.player;
      render();
      return engineIfDue();
    } catch (err) {
      say(`${err.message}; a new game starts.`);
    }
  }
  return newGame();
}

start();
