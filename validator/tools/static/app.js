// The ruleval playground: plain JavaScript, no libraries, talking only to the server it came from.
// Every text from the server is shown with textContent; the one piece of markup inserted, the
// picture, is SVG written by ruleval itself with every string escaped.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { catalogue: null, original: "", label: "", checkTimer: null, checkSeq: 0 };

function setStatus(text, isError) {
  const el = $("status");
  el.textContent = text;
  el.className = isError ? "error" : "";
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const response = await fetch(path, init);
  let answer;
  try {
    answer = await response.json();
  } catch (e) {
    throw new Error(`${path}: HTTP ${response.status}`);
  }
  if (!response.ok) throw new Error(answer.error || `HTTP ${response.status}`);
  return answer;
}

function show(tab) {
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("on", b.dataset.tab === tab);
  for (const p of document.querySelectorAll(".pane")) p.classList.toggle("on", p.id === tab);
}

function request(extra) {
  return Object.assign({
    base: $("ruleset").value,
    text: $("editor").value,
    label: state.label || $("ruleset").value,
  }, extra || {});
}

function runOptions() {
  const args = $("args").value.trim();
  return {
    state: $("state").value,
    query: $("query").value.trim() || "main",
    args: args || "[]",
    mode: $("mode").value,
    seed: parseInt($("seed").value || "0", 10),
    dice: $("dice").value,
    focus: $("focus").value.trim(),
  };
}

// ------------------------------------------------------------------ diagnostics

function showDiagnostics(answer, where) {
  const box = where || $("diagnostics");
  box.textContent = "";
  const diags = answer.diagnostics || [];
  if (!diags.length) {
    const ok = document.createElement("div");
    ok.className = "ok";
    ok.textContent = "no diagnostics";
    box.appendChild(ok);
    return;
  }
  for (const d of diags) {
    const row = document.createElement("div");
    row.className = `diag ${d.severity}`;
    row.dataset.code = d.code;
    row.textContent = `${d.file}:${d.line}:${d.col}: ${d.severity}[${d.code}]: ${d.message}` +
      (d.pointer ? ` (at ${d.pointer})` : "") + (d.help ? `\n  help: ${d.help}` : "");
    row.style.whiteSpace = "pre-wrap";
    row.addEventListener("click", () => goTo(d.line, d.col));
    box.appendChild(row);
  }
}

function goTo(line, col) {
  const editor = $("editor");
  const lines = editor.value.split("\n");
  let at = 0;
  for (let i = 0; i < Math.max(0, line - 1) && i < lines.length; i++) at += lines[i].length + 1;
  at += Math.max(0, (col || 1) - 1);
  editor.focus();
  editor.setSelectionRange(at, at + 1);
}

async function check() {
  const seq = ++state.checkSeq;
  setStatus("checking...");
  try {
    const answer = await api("/api/check", request());
    if (seq !== state.checkSeq) return; // an older answer: a newer edit is being checked
    showDiagnostics(answer);
    setStatus(answer.errors ? `${answer.errors} error(s)` : "checked: no errors", answer.errors > 0);
  } catch (e) {
    if (seq === state.checkSeq) setStatus(String(e.message || e), true);
  }
}

function scheduleCheck() {
  clearTimeout(state.checkTimer);
  state.checkTimer = setTimeout(check, 400);
}

// ------------------------------------------------------------------ running

function failed(answer, pane) {
  const el = $(pane);
  el.textContent = answer.rendered || (answer.diagnostics || []).map((d) => `${d.code}: ${d.message}`).join("\n");
  show(pane);
  setStatus("failed: see the diagnostics", true);
}

async function run() {
  setStatus("running...");
  try {
    const answer = await api("/api/run", request(runOptions()));
    if (!answer.ok) return failed(answer, "result");
    $("result").textContent = answer.text;
    const pic = $("picture");
    pic.textContent = "";
    if (answer.picture) {
      pic.innerHTML = answer.picture; // SVG written by ruleval, every string escaped
      show("picture");
    } else {
      const note = document.createElement("p");
      note.className = "muted";
      note.textContent = answer.picture_note || "no picture";
      pic.appendChild(note);
      show("result");
    }
    setStatus("ran");
  } catch (e) {
    setStatus(String(e.message || e), true);
  }
}

async function explain() {
  setStatus("explaining...");
  try {
    const answer = await api("/api/run", request(Object.assign(runOptions(), { explain: true })));
    if (!answer.ok) return failed(answer, "trace");
    $("trace").textContent = answer.explain;
    show("trace");
    setStatus("explained");
  } catch (e) {
    setStatus(String(e.message || e), true);
  }
}

async function diff() {
  setStatus("comparing...");
  try {
    const options = runOptions();
    const answer = await api("/api/diff", request(Object.assign(options, {
      other: $("other").value,
      generate: parseInt($("generate").value || "0", 10),
      state: options.state.trim() ? options.state : null,
    })));
    if (!answer.ok) return failed(answer, "difference");
    $("difference").textContent = answer.text;
    show("difference");
    setStatus(answer.differ ? `${answer.differ} difference(s)` : "no difference found");
  } catch (e) {
    setStatus(String(e.message || e), true);
  }
}

// whole games with a player for every side: the figures as text, and their plot as an image (an
// <img> of the SVG, never markup in the page)
async function balance() {
  setStatus("playing...");
  try {
    const answer = await api("/api/balance", request({
      player: $("player").value,
      games: parseInt($("games").value || "1", 10),
      rounds: parseInt($("rounds").value || "1", 10),
    }));
    if (!answer.ok) {
      $("balance-plot").hidden = true;
      $("balance-text").textContent = answer.rendered || (answer.diagnostics || []).map((d) => `${d.code}: ${d.message}`).join("\n");
      show("balanced");
      return setStatus("failed: see the diagnostics", true);
    }
    $("balance-text").textContent = answer.text;
    const img = $("balance-plot");
    if (answer.svg) {
      img.src = "data:image/svg+xml;base64," + btoa(unescape(encodeURIComponent(answer.svg)));
      img.alt = "balance plot";
      img.hidden = false;
    } else {
      img.hidden = true;
    }
    show("balanced");
    setStatus(`${answer.figures.games} game(s) played`);
  } catch (e) {
    setStatus(String(e.message || e), true);
  }
}

// ------------------------------------------------------------------ picking and opening

function family(name) {
  return name.split("/")[0];
}

function fillExamples() {
  const fam = family($("ruleset").value);
  const select = $("example");
  const keep = select.value;
  select.length = 1;
  for (const name of state.catalogue.examples.filter((n) => family(n) === fam)) {
    select.add(new Option(name.split("/").pop(), name));
  }
  if ([...select.options].some((o) => o.value === keep)) select.value = keep;
  else if (select.length > 1) select.selectedIndex = 1;
  const mode = state.catalogue.modes[fam];
  $("mode").value = mode || "plain";
  // diff against another ruleset of the same family, by default
  const current = $("ruleset").value;
  const other = state.catalogue.rulesets.find((n) => family(n) === fam && n !== current);
  if (other && (family($("other").value) !== fam || $("other").value === current)) $("other").value = other;
}

async function loadExample() {
  const name = $("example").value;
  if (!name) return;
  const answer = await api(`/api/file?name=${encodeURIComponent(name)}`);
  $("state").value = answer.text;
}

async function loadRuleset() {
  const name = $("ruleset").value;
  const answer = await api(`/api/file?name=${encodeURIComponent(name)}`);
  state.original = answer.text;
  state.label = "";
  $("label").textContent = "";
  $("editor").value = answer.text;
  fillExamples();
  await loadExample();
  await check();
}

function openFile(event) {
  const file = event.target.files[0];
  if (!file) return;
  if (file.size > state.catalogue.limits.body / 4) {
    setStatus(`${file.name} is too large for the playground`, true);
    return;
  }
  const reader = new FileReader();
  reader.onload = () => {
    $("editor").value = String(reader.result);
    state.label = file.name;
    $("label").textContent = `${file.name} (loaded beside ${$("ruleset").value})`;
    check();
  };
  reader.readAsText(file);
}

async function start() {
  try {
    state.catalogue = await api("/api/bundle");
    for (const name of state.catalogue.rulesets) {
      $("ruleset").add(new Option(name, name));
      $("other").add(new Option(name, name));
    }
    $("ruleset").addEventListener("change", () => loadRuleset().catch((e) => setStatus(String(e.message || e), true)));
    $("example").addEventListener("change", () => loadExample().catch((e) => setStatus(String(e.message || e), true)));
    $("editor").addEventListener("input", scheduleCheck);
    $("open").addEventListener("change", openFile);
    $("run").addEventListener("click", run);
    $("explain").addEventListener("click", explain);
    $("diff").addEventListener("click", diff);
    $("balance").addEventListener("click", balance);
    for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => show(b.dataset.tab));
    await loadRuleset();
    document.body.dataset.ready = "true";
  } catch (e) {
    setStatus(String(e.message || e), true);
  }
}

start();
