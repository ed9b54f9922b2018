// The ruleval playground: plain JavaScript, no libraries, talking only to the server it came from.
// Every text from the server is shown with textContent; the one piece of markup inserted, the
// picture, is SVG written by ruleval itself with every string escaped.
"use strict";

const $ = (id) => document.getElementById(id);
// texts: each file of the folder loaded into the editor, as edited; originals: as the server has it
const state = { catalogue: null, texts: {}, originals: {}, file: "", label: "", checkTimer: null, checkSeq: 0, cm: null };

// ------------------------------------------------------------------ the editor (CodeMirror 5, vendored)

function defineRulesMode() {
  if (!window.CodeMirror || !CodeMirror.defineSimpleMode) return;
  const words = "and as at break cite clauses const continue cycle decision def default elif else emit enum extends " +
    "fn for goto if import in input let not or otherwise override procedure query record reject require rule " +
    "ruleset schema settle step stop table then var when with";
  CodeMirror.defineSimpleMode("ruleval", {
    start: [
      { regex: /#.*/, token: "comment" },
      { regex: /"(?:[^\\"]|\\.)*"?/, token: "string" },
      { regex: new RegExp(`\\b(?:${words.split(" ").join("|")})\\b`), token: "keyword" },
      { regex: /\b(?:true|false|none)\b/, token: "atom" },
      { regex: /-?\d+(?:\.\d+)?/, token: "number" },
      { regex: /[A-Z][A-Za-z0-9_]*/, token: "type" },
      { regex: /[a-z_][A-Za-z0-9_]*(?=\s*\()/, token: "def" },
      { regex: /[-+*\/%=<>!?|]+/, token: "operator" },
    ],
    meta: { lineComment: "#" },
  });
}

function modeOf(name) {
  if (name.endsWith(".rules")) return "ruleval";
  if (name.endsWith(".json")) return { name: "javascript", json: true };
  if (name.endsWith(".yaml") || name.endsWith(".yml")) return "yaml";
  return null;
}

function editorText() {
  return state.cm ? state.cm.getValue() : $("editor").value;
}

function setEditorText(text, name) {
  if (state.cm) {
    state.cm.setOption("mode", modeOf(name));
    state.cm.setValue(text);
    state.cm.save();
  } else {
    $("editor").value = text;
  }
}

function startEditor(onEdit) {
  defineRulesMode();
  if (!window.CodeMirror) {
    $("editor").addEventListener("input", onEdit);
    return;
  }
  state.cm = CodeMirror.fromTextArea($("editor"), { lineNumbers: true, mode: "ruleval", indentUnit: 2, tabSize: 2 });
  state.cm.setSize(null, "60vh");
  state.cm.on("changes", (cm, changes) => {
    cm.save(); // the textarea keeps the text too (what a script or a test reads)
    if (changes.some((c) => c.origin !== "setValue")) onEdit();
  });
}

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
  if (path !== "/api/check" && body !== undefined) showWarnings(answer.warnings || []);
  return answer;
}

function show(tab) {
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("on", b.dataset.tab === tab);
  for (const p of document.querySelectorAll(".pane")) p.classList.toggle("on", p.id === tab);
}

function request(extra) {
  const base = $("ruleset").value;
  state.texts[state.file] = editorText();
  const edits = {};
  for (const [name, text] of Object.entries(state.texts)) {
    if (name !== base && name !== "" && text !== state.originals[name]) edits[name] = text;
  }
  return Object.assign({
    base: base,
    text: base in state.texts ? state.texts[base] : undefined,
    label: state.label || base,
    edits: edits,
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
  for (const d of diags) box.appendChild(diagnosticRow(d));
}

function diagnosticRow(d) {
  const row = document.createElement("div");
  row.className = `diag ${d.severity}`;
  row.dataset.code = d.code;
  row.textContent = `${d.file}:${d.line}:${d.col}: ${d.severity}[${d.code}]: ${d.message}` +
    (d.pointer ? ` (at ${d.pointer})` : "") + (d.help ? `\n  help: ${d.help}` : "");
  row.style.whiteSpace = "pre-wrap";
  row.addEventListener("click", () => goTo(d.line, d.col));
  return row;
}

// what a run, a diff or a balance met wrong in ruleval itself while its answer is right (I002: a
// definition the reference ran instead of the generated code), shown above the answer until the next
function showWarnings(warnings) {
  const box = $("warnings");
  box.textContent = "";
  for (const d of warnings) box.appendChild(diagnosticRow(d));
  box.hidden = !warnings.length;
}

function goTo(line, col) {
  if (state.cm) {
    state.cm.focus();
    state.cm.setCursor({ line: Math.max(0, line - 1), ch: Math.max(0, (col || 1) - 1) });
    return;
  }
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
    const unit = $("unit").value.trim();
    const answer = await api("/api/run", request(Object.assign(runOptions(), { explain: true }, unit ? { unit } : {})));
    if (!answer.ok) return failed(answer, "trace");
    $("trace").textContent = answer.explain;
    show("trace");
    setStatus("explained");
  } catch (e) {
    setStatus(String(e.message || e), true);
  }
}

// a piece clicked on the picture (a token, or a marker, where the drawing says it stands): explained
// alone, as `explain --unit` would, by the place the drawing names it at
function explainClicked(event) {
  const piece = event.target.closest && event.target.closest("g.token, g.marker");
  const at = piece ? piece.getAttribute("data-at") : "";
  if (!at) return;
  $("unit").value = at;
  explain();
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
    $("diff-summary").textContent = answer.summary || "";
    $("diff-text").textContent = answer.text;
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
  return name.includes("/") ? name.slice(0, name.lastIndexOf("/")) : "";
}

function fillExamples() {
  const current = $("ruleset").value;
  const fam = family(current);
  const select = $("example");
  const keep = select.value;
  select.length = 1;
  for (const name of state.catalogue.states[current] || []) {
    select.add(new Option(name.slice(fam ? fam.length + 1 : 0), name));
  }
  if (keep && [...select.options].some((o) => o.value === keep)) select.value = keep;
  else if (select.length > 1) select.selectedIndex = 1;
  $("mode").value = state.catalogue.modes[current] || "plain";
  // diff against the ruleset this one extends; else its family's main ruleset, else another of the family
  const main = state.catalogue.mains[fam];
  const other = state.catalogue.bases[current] || (main !== current ? main : undefined) ||
    state.catalogue.rulesets.find((n) => family(n) === fam && n !== current);
  if (other) $("other").value = other;
}

async function loadExample() {
  const name = $("example").value;
  if (!name) return;
  const answer = await api(`/api/file?name=${encodeURIComponent(name)}`);
  $("state").value = answer.text;
}

async function fileText(name) {
  if (!(name in state.originals)) {
    const answer = await api(`/api/file?name=${encodeURIComponent(name)}`);
    state.originals[name] = answer.text;
    state.texts[name] = answer.text;
  }
  return state.texts[name];
}

async function editFile(name) {
  if (state.file) state.texts[state.file] = editorText();
  const text = await fileText(name);
  state.file = name;
  $("file").value = name;
  setEditorText(text, name);
}

async function loadRuleset() {
  const name = $("ruleset").value;
  state.label = "";
  $("label").textContent = "";
  if (state.file === name) delete state.texts[name]; // picking a ruleset again: its text as saved
  delete state.originals[name];
  await editFile(name);
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
    state.file = $("ruleset").value;
    setEditorText(String(reader.result), file.name);
    state.label = file.name;
    $("label").textContent = `${file.name} (loaded beside ${$("ruleset").value})`;
    check();
  };
  reader.readAsText(file);
}

async function start() {
  try {
    state.catalogue = await api("/api/bundle");
    for (const name of state.catalogue.rulesets) $("ruleset").add(new Option(name, name));
    for (const name of state.catalogue.others) $("other").add(new Option(name, name));
    for (const name of state.catalogue.files) $("file").add(new Option(name, name));
    if (state.catalogue.default) $("ruleset").value = state.catalogue.default;
    if (state.catalogue.project) $("project").textContent = `project: ${state.catalogue.project}`;
    startEditor(scheduleCheck);
    $("ruleset").addEventListener("change", () => loadRuleset().catch((e) => setStatus(String(e.message || e), true)));
    $("example").addEventListener("change", () => loadExample().catch((e) => setStatus(String(e.message || e), true)));
    $("file").addEventListener("change", () => editFile($("file").value).catch((e) => setStatus(String(e.message || e), true)));
    $("open").addEventListener("change", openFile);
    $("run").addEventListener("click", run);
    $("explain").addEventListener("click", explain);
    $("picture").addEventListener("click", explainClicked);
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
