// egorec console: live state over server-sent events, control through the recorder's services.
"use strict";
const params = new URLSearchParams(location.search);
const token = params.get("token") || sessionStorage.getItem("egorecToken") || "";
if (token) sessionStorage.setItem("egorecToken", token);
const q = (s) => document.querySelector(s);
const tq = (url) => url + (url.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token);
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) { if (k === "class") e.className = v; else e.setAttribute(k, v); }
  for (const k of kids) e.append(k);
  return e;
};
window.egorec = { latencies: [], snapshots: 0, lastStop: null, reviewReady: false, statusStamp: 0 };
let snap = null, recording = false, lastVerdictIndex = 0;
// The recorder's clock at its last start/stop/abort answer: a ~/status stamped before it was sent before
// that action and may still arrive after the answer (another DDS channel); it must not undo the answer's state.
// (ns as a JS number: exact to 256 ns, far finer than the status period). Only for FLOOR_MS after the answer:
// a status older than that is not on its way, and a recorder clock set back (NTP) must not freeze the page.
let floorNs = 0, floorUntil = 0;
const FLOOR_MS = 10000;
let busy = "";            // a control request in flight: "start" | "stop" | "abort"
let startQueued = false;  // Start pressed while a stop was committing: sent once the stop is answered
const drops = {};

async function api(path, body) {
  const opts = body === undefined ? { headers: { "X-Egorec-Token": token } }
    : { method: "POST", headers: { "X-Egorec-Token": token, "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const r = await fetch(path, opts);
  let doc = {};
  try { doc = await r.json(); } catch (e) { doc = { error: r.statusText }; }
  if (!r.ok) throw new Error(doc.message || doc.error || r.statusText);
  return doc;
}
const say = (text, bad) => { const m = q("#message"); m.textContent = text; m.className = bad ? "error" : ""; };
const mb = (n) => n >= 1e9 ? (n / 1e9).toFixed(2) + " GB" : n >= 1e6 ? (n / 1e6).toFixed(1) + " MB" : (n / 1e3).toFixed(0) + " kB";

// Start is enabled while idle, and while a stop is committing (it is then queued); Stop/Abort while recording.
function buttons() {
  const connected = !!(snap && snap.connected);
  q("#start").disabled = !connected || !(busy === "stop" || (!busy && !recording));
  q("#stop").disabled = !connected || !!busy || !recording;
  q("#abort").disabled = !connected || !!busy || !recording;
}

// ---- live --------------------------------------------------------------------------------
// The page shares the robot PC with the recording (headless chromium paints in software), so it
// draws little: events come at 5 Hz; controls and previews follow each event (a preview is fetched
// only when its seq is new), the panels are redrawn at most every LIVE_MS from the newest event.
// Tiles, table rows and sensor widgets are made once and kept; a node is written only when its
// text or class changes; the glove heat map is a tiny canvas scaled by CSS and force bars move by
// transform (neither lays the page out again).
const judged = (s) => (s.received > 0 && s.dropped / s.received > 0.05) ? "HIGH" : "ok";
const streamKey = (id) => id.replace(".", "_");
const LIVE_MS = 500;
let liveAt = 0, liveTimer = 0;
const setText = (node, text) => { if (node.textContent !== text) node.textContent = text; };
const setClass = (node, cls) => { if (node.className !== cls) node.className = cls; };
const listKeys = {};
function setList(node, items) {          // items: [[text, class]]; rebuilt only when they change
  const key = JSON.stringify(items);
  if (listKeys[node.id] === key) return;
  listKeys[node.id] = key;
  node.replaceChildren(...items.map(([t, c]) => el(node.tagName === "UL" ? "li" : "div", { class: c }, t)));
}

function render(d) {
  snap = d; window.egorec.snapshots++;
  const st = d.status;
  const stale = !!(st && (st.stamp_ns || 0) < floorNs && Date.now() < floorUntil);   // sent before the last answer
  if (st) window.egorec.statusStamp = st.stamp_ns;
  if (!st) recording = false; else if (!stale) recording = st.state === "recording";
  const badge = q("#state");
  if (!d.connected || !st) { setText(badge, "no recorder"); setClass(badge, "badge offline"); }
  else if (stale) { setText(badge, recording ? "recording" : "idle"); setClass(badge, "badge " + badge.textContent); }
  else { setText(badge, st.stage || st.state); setClass(badge, "badge " + st.state); }
  buttons();
  if (!st) return;
  // the top line follows each event with the badge (a throttled one said "episode 1 · 33 rows" beside "idle")
  setText(q("#summary"), `task ${st.task}` + (recording ? ` · episode ${st.episode_index} · ${st.rows} rows` : "")
    + ` · encoder backlog ${st.encoder_backlog}${st.encoder_backlog_key ? " (" + st.encoder_backlog_key + ")" : ""}`);
  renderUpload(st);                     // a line of text; the sending episode's % follows each event
  if (st.last_episode_index && st.last_episode_index !== lastVerdictIndex && window.egorec.lastStop === st.last_episode_index) {
    showVerdict(st.last_episode_index, st.last_verdict, st.last_reasons || []);
  }
  if (document.hidden) return;          // nobody looks: no previews, no panels
  previews(d, st);
  if (liveTimer) return;                // a redraw is due: it takes the newest event
  const wait = liveAt + LIVE_MS - performance.now();
  if (wait <= 0) renderLive(); else liveTimer = setTimeout(renderLive, wait);
}

function renderLive() {
  liveTimer = 0; liveAt = performance.now();
  const d = snap, st = d && d.status;
  if (!st) return;
  setText(q("#disk"), `${st.free_disk_gb.toFixed(1)} GB free`);
  if (!q("#task").value && q("#task").placeholder !== st.task) q("#task").placeholder = st.task;
  const warns = [];
  for (const diag of d.diagnostics) {
    if (diag.name === "recorder" && diag.level !== "ok") warns.push([diag.message, "warn"]);
  }
  if (st.overload) warns.push([(/^OVERLOADED/.test(st.overload) ? "" : "OVERLOADED: ") + st.overload, "error"]);
  // counters since the recorder started: warn for a while after they grow
  for (const [key, text] of [["udp_drops", "UDP datagrams dropped by the kernel (socket receive buffer full: images lost)"],
                             ["callback_drops", "samples dropped unread (the recorder fell over 1 s behind: CPU starved)"]]) {
    const now = st[key] || 0, seen = drops[key];
    if (seen !== undefined && now > seen.value) drops[key] = { value: now, grew: Date.now(), by: now - seen.value };
    else if (seen === undefined) drops[key] = { value: now, grew: 0, by: 0 };
    if (Date.now() - drops[key].grew < 15000) warns.push([`${drops[key].by} ${text}; ${now} since the recorder started`, "error"]);
  }
  if (recording && strained(st)) warns.push([`previews slowed to one every ${SLOW_MS / 1000} s: the recorder is short of CPU`, "warn"]);
  setList(q("#warnings"), warns);
  const alarms = st.alarms || [];
  setList(q("#alarms"), alarms.length ? alarms.map((a) => [a, "warn"]) : [["none", "ok"]]);
  renderTiles(st); renderHealth(st); renderSensors(d, st);
}

function tile(key, stream, s) {
  let t = document.getElementById("tile-" + key);
  if (!t) {
    t = el("div", { class: "tile", id: "tile-" + key }, el("canvas", { class: "preview", width: 320, height: 240, title: stream }),
      el("div", { class: "meta" }, el("b", {}, stream), el("span", { class: "fps" }), el("span", { class: "age" })));
    t.dataset.seq = "0"; q("#tiles").append(t); tileMeta(t, s);    // its state at once, not at the next redraw
  }
  return t;
}

function tileMeta(t, s) {
  const level = s.last_sample_age_s < 0 ? "stale" : s.last_sample_age_s > 0.5 ? "error" : s.dropped ? "warn" : "ok";
  setClass(t, "tile " + level);
  setText(t.querySelector(".fps"), `${s.rate_hz.toFixed(1)} fps`);
  setText(t.querySelector(".age"), `age ${s.last_sample_age_s.toFixed(1)} s`);
}

// Previews: the JPEGs whose seq is new are fetched together, decoded off the main thread
// (createImageBitmap) and handed to their canvases in one task, so the page makes one frame per
// event, not one per camera; while a batch is on its way newer events fetch nothing (the next
// batch takes the newest), so a slow machine gets fewer previews, never a queue of them.
let previewsBusy = false, batchAt = -Infinity;
async function previews(d, st) {
  if (previewsBusy || (strained(st) && performance.now() - batchAt < SLOW_MS)) return;
  const wanted = [];
  for (const s of st.streams) {
    const key = streamKey(s.stream), p = d.previews[key];
    if (!p) continue;
    const t = tile(key, s.stream, s);
    if (String(p.seq) !== t.dataset.seq) wanted.push([t, key, p.seq]);
  }
  if (!wanted.length) return;
  previewsBusy = true; batchAt = performance.now();
  try {
    const got = await Promise.all(wanted.map(([t, key, seq]) => fetchPreview(t, key, seq)));
    for (const g of got) if (g) showPreview(...g);
  } finally { previewsBusy = false; }
}

// The recording comes first: while the recorder shows it is short of CPU (OVERLOADED, an encoder
// falling behind, datagrams or samples dropped since its last status) the page takes one batch of
// previews every SLOW_MS instead of one per event, until the recorder has been fine for CALM_MS.
const SLOW_MS = 2000, CALM_MS = 10000, BACKLOG_STRAIN = 10;
let strainedAt = -Infinity, strainSeen = null;
function strained(st) {
  const now = performance.now(), seen = [st.udp_drops || 0, st.callback_drops || 0, st.stamp_ns];
  if (strainSeen && seen[2] !== strainSeen[2]) {          // a new status: did anything grow?
    if (st.overload || st.encoder_backlog >= BACKLOG_STRAIN || seen[0] > strainSeen[0] || seen[1] > strainSeen[1]) strainedAt = now;
  }
  if (!strainSeen || seen[2] !== strainSeen[2]) strainSeen = seen;
  return now - strainedAt < CALM_MS;
}

async function fetchPreview(t, key, seq) {
  try {
    const r = await fetch(tq("preview/" + key));
    if (!r.ok) return null;
    return [t, seq, Number(r.headers.get("X-Stamp-Ns")), await createImageBitmap(await r.blob())];
  } catch (e) { return null; }       // the console restarting, a torn JPEG: the next event brings another
}

function showPreview(t, seq, stamp, bitmap) {
  const c = t.querySelector("canvas");
  if (c.width !== bitmap.width || c.height !== bitmap.height) { c.width = bitmap.width; c.height = bitmap.height; }
  c.getContext("bitmaprenderer").transferFromImageBitmap(bitmap);
  t.dataset.seq = c.dataset.seq = String(seq);
  window.egorec.latencies.push(Date.now() - stamp / 1e6);
  if (window.egorec.latencies.length > 5000) window.egorec.latencies.shift();
}

function renderTiles(st) {
  const shown = new Set(st.streams.map((s) => "tile-" + streamKey(s.stream)));
  for (const t of [...q("#tiles").children]) if (!shown.has(t.id)) t.remove();   // the recorder restarted with another rig
  for (const s of st.streams) {
    const t = document.getElementById("tile-" + streamKey(s.stream));
    if (t) tileMeta(t, s);
  }
}

const healthRows = new Map();
function renderHealth(st) {
  const body = q("#health tbody"), names = new Set(st.streams.map((s) => s.stream));
  for (const [name, cells] of healthRows) if (!names.has(name)) { cells[0].parentNode.remove(); healthRows.delete(name); }
  for (const s of st.streams) {
    let cells = healthRows.get(s.stream);
    if (!cells) {
      cells = Array.from({ length: 8 }, () => el("td"));
      body.append(el("tr", {}, ...cells)); healthRows.set(s.stream, cells);
    }
    const j = judged(s);
    [s.stream, s.rate_hz.toFixed(1), s.last_sample_age_s.toFixed(1), String(s.received), String(s.dropped),
      String(s.late), String(s.invalid), j].forEach((text, i) => setText(cells[i], text));
    setClass(cells[7], j);
  }
}

const sensorViews = new Map();
function sensorView(name, kind) {      // made once per topic: a label and a heat-map canvas or a bar
  let v = sensorViews.get(name);
  if (!v) {
    v = { label: el("div"), kind, last: "" };
    if (kind === "glove") { v.canvas = el("canvas", { class: "heat" }); v.box = el("div", {}, v.label, v.canvas); }
    else { v.bar = el("div", { class: "bar" }); v.box = el("div", {}, v.label, el("div", { class: "bar-track" }, v.bar)); }
    sensorViews.set(name, v);
  }
  return v;
}
const HEAT_COLUMNS = 16;
function drawHeat(canvas, values) {
  const w = HEAT_COLUMNS, h = Math.max(1, Math.ceil(values.length / w));
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; canvas.style.height = (h * 9) + "px"; }
  const g = canvas.getContext("2d"), img = g.createImageData(w, h), max = Math.max(1, ...values);
  values.forEach((v, i) => {
    const c = Math.round(255 * v / max);
    img.data.set([c, Math.round(c / 3), 255 - c, 255], i * 4);
  });
  g.putImageData(img, 0, 0);
}

function renderSensors(d, st) {
  const slam = st.streams.filter((s) => /slam|pose|trajectory/i.test(s.stream + s.topic));
  setList(q("#slam"), slam.length ? slam.map((s) => {
    const lost = s.last_sample_age_s < 0 || s.last_sample_age_s > 0.5;
    return [`${s.stream}: ${lost ? "LOST" : "tracking"} (${s.rate_hz.toFixed(0)} Hz)`, lost ? "error" : "ok"];
  }) : [["no SLAM stream", ""]]);
  const boxes = [];
  for (const [name, g] of Object.entries(d.sensors || {})) {
    if (g.kind !== "glove" && g.kind !== "force") continue;
    const v = sensorView(name, g.kind), key = g.values.join(",");
    boxes.push(v.box);
    if (key === v.last) continue;
    v.last = key;
    if (g.kind === "glove") { setText(v.label, name); drawHeat(v.canvas, g.values); }
    else {
      const mag = Math.hypot(...g.values);
      setText(v.label, `${name}: ${mag.toFixed(1)} N`); v.bar.style.transform = `scaleX(${Math.min(300, mag * 3) / 300})`;
    }
  }
  const box = q("#sensors"), shown = [...box.children];
  if (!boxes.length) setList(box, [["no glove or force topic", ""]]);
  else if (shown.length !== boxes.length || shown.some((b, i) => b !== boxes[i])) { box.replaceChildren(...boxes); delete listKeys[box.id]; }
}

// ---- control -----------------------------------------------------------------------------
// A press is never dropped silently: it goes to the recorder (which refuses with its reason), is queued
// (Start while a stop commits), or the page says why it waits.
function answered(r, isRecording) {
  if (r.stamp_ns) { floorNs = r.stamp_ns; floorUntil = Date.now() + FLOOR_MS; }
  recording = isRecording;
}
async function start() {
  if (busy === "stop") { startQueued = true; say("Start queued: the next episode starts once this one is committed"); return; }
  if (busy) { say(`start: the recorder is still answering the ${busy}; press Start again in a moment`, true); return; }
  busy = "start"; buttons();
  try {
    const r = await api("api/start", { task: q("#task").value, instruction: q("#instruction").value });
    answered(r, true);
    say(r.message); q("#verdict").hidden = true; rememberInstruction(q("#instruction").value);
  } catch (e) { say("start: " + e.message, true); }
  finally { busy = ""; buttons(); }
}
async function stop() {
  if (busy) { say(`stop: the recorder is still answering the ${busy}; press Stop again in a moment`, true); return; }
  busy = "stop"; buttons();
  say("stopping: committing the episode…");
  let ok = false;
  try {
    const r = await api("api/stop", {});
    answered(r, false); ok = true;
    say(r.message); window.egorec.lastStop = r.episode_index;
    if (r.episode_index) showVerdict(r.episode_index, r.verdict || "", r.reasons || []);
    loadEpisodes();
  } catch (e) { say("stop: " + e.message + (startQueued ? " (the queued Start was not sent)" : ""), true); }
  finally { busy = ""; buttons(); }
  if (startQueued) { startQueued = false; if (ok) start(); }
}
async function abort() {
  if (busy) { say(`abort: the recorder is still answering the ${busy}; press Esc again in a moment`, true); return; }
  if (!recording || !confirm("Abort: the episode being recorded is discarded. Abort?")) return;
  busy = "abort"; buttons();
  try { const r = await api("api/abort", {}); answered(r, false); say(r.message); }
  catch (e) { say("abort: " + e.message, true); }
  finally { busy = ""; buttons(); }
}
async function deleteEpisode(index, ask = true) {
  if (ask && !confirm(`Delete episode ${index}? Its files are removed for good (its number is not reused).`)) return false;
  try { say((await api("api/delete", { episode_index: index })).message); loadEpisodes(); return true; }
  catch (e) { say("delete: " + e.message, true); return false; }
}

async function showVerdict(index, verdict, reasons) {
  lastVerdictIndex = index;
  q("#verdict").hidden = false; q("#v-index").textContent = index;
  const v = q("#v-verdict"); v.textContent = verdict || "not computed"; v.className = "verdict " + verdict;
  q("#v-reasons").replaceChildren(...reasons.map((r) => el("li", {}, r)));
  q("#keep").onclick = () => { q("#verdict").hidden = true; };
  q("#redo").onclick = async () => { if (await deleteEpisode(index)) q("#verdict").hidden = true; };
  q("#keep").focus();
  q("#v-thumbs").replaceChildren();
  try {
    const strips = await api(`api/episodes/${index}/thumbnails`);
    q("#v-thumbs").replaceChildren(...strips.flatMap((s) => s.frames.map((f) => el("img", { src: f.src, title: `${s.key} row ${f.row}` }))));
  } catch (e) { q("#v-thumbs").textContent = "thumbnails: " + e.message; }
}

function rememberInstruction(text) {
  if (!text) return;
  const recent = JSON.parse(localStorage.getItem("egorecRecent") || "[]").filter((t) => t !== text);
  recent.unshift(text); localStorage.setItem("egorecRecent", JSON.stringify(recent.slice(0, 20))); offerRecent([]);
}
function offerRecent(fromEpisodes) {
  const recent = JSON.parse(localStorage.getItem("egorecRecent") || "[]");
  const all = [...new Set([...recent, ...fromEpisodes])].slice(0, 20);
  q("#recent").replaceChildren(...all.map((t) => el("option", { value: t })));
}

// ---- episodes and review -------------------------------------------------------------------
let episodes = [], episodesTask = "", loadingEpisodes = false;
async function loadEpisodes() {
  loadingEpisodes = true;
  try {
    const r = await api("api/episodes" + (q("#task").value ? "?task=" + encodeURIComponent(q("#task").value) : ""));
    episodes = r.episodes; episodesTask = r.task;
    offerRecent(episodes.slice().reverse().map((e) => e.instruction).filter(Boolean));
    q("#episodes tbody").replaceChildren(...episodes.slice().reverse().map((e) => {
      const rv = el("button", { class: "review" }, "Review"); rv.onclick = () => openReview(e.episode_index, r.task);
      const del = el("button", { class: "danger delete" }, "Delete"); del.onclick = () => deleteEpisode(e.episode_index);
      return el("tr", { "data-episode": e.episode_index }, el("td", {}, String(e.episode_index)), el("td", {}, e.duration_s.toFixed(1)),
        el("td", {}, String(e.rows)), el("td", {}, e.instruction), el("td", { class: e.verdict, title: (e.reasons || []).join("\n") }, e.verdict || "–"),
        uploadCell(e.upload), el("td", {}, rv, " ", del));
    }));
  } catch (e) { say("episodes: " + e.message, true); }
  finally { loadingEpisodes = false; }
}

// ---- upload: the queue's summary (~/status) and each episode's state (~/list_episodes) ------------
const UPLOAD_OFF = "the recorder uploads nothing (started without --upload-server / upload_server)";
function uploadText(u) {
  if (!u) return ["–", "", "this recorder does not report uploads"];
  const tries = (n) => `${n} attempt${n === 1 ? "" : "s"}`;
  switch (u.state) {
    case "off": return ["no upload", "off", UPLOAD_OFF];
    case "not queued": return ["not queued", "off", "recorded before this recorder uploaded, or by another one"];
    case "pending": return [u.attempts ? `pending (${tries(u.attempts)} failed${u.retry_in_s ? `, retry in ${Math.ceil(u.retry_in_s)} s` : ""})` : "pending",
      "pending", u.last_error || "waiting for its turn"];
    case "uploading": return [u.sent !== undefined ? `uploading ${Math.floor(100 * u.sent / Math.max(1, u.size))} %` : "uploading",
      "uploading", u.size ? `${mb(u.sent || 0)} of ${mb(u.size)}` : "being sent"];
    case "done": return [`done · session ${u.session_id}`, "done", `on the server as session ${u.session_id} (${mb(u.size)})`];
    case "failed": return [`failed after ${tries(u.attempts)}: ${u.last_error}`, "failed", `${u.last_error}\n(\`egorec upload\` queues it again)`];
    case "gone": return ["gone (deleted before it was sent)", "off", u.last_error];
    default: return [u.state, "", ""];
  }
}
function uploadCell(u) {
  const [text, cls, title] = uploadText(u);
  return el("td", { class: "upload " + cls, title }, text);
}
let uploadSeen = "";
function renderUpload(st) {
  const box = q("#upload");
  if (!("upload_server" in st)) { box.textContent = ""; return; }
  if (!st.upload_server) { box.textContent = "upload off"; box.className = "upload off"; box.title = UPLOAD_OFF; return; }
  const waiting = st.upload_pending - st.upload_uploading;
  const sending = st.upload_episode_index
    ? ` (episode ${st.upload_episode_index}: ${Math.floor(100 * st.upload_sent_bytes / Math.max(1, st.upload_size_bytes))} % of ${mb(st.upload_size_bytes)})` : "";
  box.textContent = `upload: ${waiting} pending · ${st.upload_uploading} uploading${sending} · ${st.upload_done} done (${mb(st.upload_done_bytes)})`
    + ` · ${st.upload_failed} failed · ${mb(st.upload_rate_bytes_s)}/s`;
  box.className = "upload " + (st.upload_failed ? "failed" : st.upload_uploading ? "uploading" : "done");
  box.title = `to ${st.upload_server}: ${st.upload}`;
  // the episode being sent: its percentage live; the list again when an episode changes state
  if (st.upload_task === episodesTask && st.upload_episode_index) {
    const cell = document.querySelector(`tr[data-episode='${st.upload_episode_index}'] td.upload`);
    if (cell) { cell.className = "upload uploading"; cell.textContent = `uploading ${Math.floor(100 * st.upload_sent_bytes / Math.max(1, st.upload_size_bytes))} %`; }
  }
  const seen = [st.upload_pending, st.upload_uploading, st.upload_done, st.upload_failed, st.upload_episode_index].join();
  if (seen !== uploadSeen && !loadingEpisodes) { if (uploadSeen) loadEpisodes(); uploadSeen = seen; }
}

let reviewVideos = [];
async function openReview(index, task) {
  window.egorec.reviewReady = false;
  const doc = await api(`api/episodes/${index}/review?task=${encodeURIComponent(task)}`);
  q("#review").hidden = false; q("#r-index").textContent = index;
  reviewVideos = doc.videos.map((v) => {
    const video = el("video", { src: tq(v.url + (v.url.includes("?") ? "" : "?task=" + encodeURIComponent(task))), preload: "auto", muted: "" });
    video.muted = true; video.dataset.key = v.key;
    return { v, video };
  });
  q("#r-videos").replaceChildren(...reviewVideos.map(({ v, video }) =>
    el("div", { class: "tile ok" }, video, el("div", { class: "meta" }, el("b", {}, v.key), el("span", {}, v.depth ? "depth (preview)" : v.playable ? "" : "preview")))));
  const master = reviewVideos[0] && reviewVideos[0].video;
  if (master) {
    master.ontimeupdate = () => {
      for (const { video } of reviewVideos.slice(1)) if (Math.abs(video.currentTime - master.currentTime) > 0.1) video.currentTime = master.currentTime;
      drawTimeline(doc.timeline, master.currentTime);
    };
  }
  drawTimeline(doc.timeline, 0);
  const drops = Object.entries(doc.timeline.drop_stats).map(([s, c]) => `${s}: ${c.repeated || 0} repeated, ${c.late || 0} late`);
  q("#r-drops").textContent = drops.join(" · ");
  window.egorec.reviewReady = true;
  q("#review").scrollIntoView();
}
function playReview() {
  const playing = reviewVideos.some(({ video }) => !video.paused);
  for (const { video } of reviewVideos) { if (playing) video.pause(); else video.play().catch(() => {}); }
}
function drawTimeline(tl, t) {
  const c = q("#r-timeline"), g = c.getContext("2d"), W = c.width, H = c.height;
  g.clearRect(0, 0, W, H);
  const colors = { force: "#4af", glove: "#f84", slam: "#6d6" };
  const kinds = ["force", "glove", "slam"], band = (H - 30) / kinds.length;
  kinds.forEach((kind, k) => {
    const lines = tl.series.filter((x) => x.kind === kind);
    g.fillStyle = "#888"; g.fillText(lines.length ? kind : `${kind}: no such stream in this episode`, 4, 12 + k * band);
    for (const s of lines) {
      const max = Math.max(1e-6, ...s.values); g.strokeStyle = colors[kind]; g.beginPath();
      s.values.forEach((v, i) => { const x = (i / Math.max(1, s.values.length - 1)) * W, y = (k + 1) * band - (v / max) * (band - 14);
        if (i) g.lineTo(x, y); else g.moveTo(x, y); });
      g.stroke();
    }
  });
  g.fillStyle = "#f44";
  for (const rows of Object.values(tl.repeats)) for (const r of rows) g.fillRect((r / Math.max(1, tl.rows - 1)) * W, H - 24, 2, 10);
  const anyRepeat = Object.values(tl.repeats).some((rows) => rows.length);
  g.fillStyle = "#888"; g.fillText("repeated sensor samples (cameras: below)" + (anyRepeat ? "" : ": none"), 4, H - 28);
  g.strokeStyle = "#fff"; const x = (t * tl.fps / Math.max(1, tl.rows - 1)) * W;
  g.beginPath(); g.moveTo(x, 0); g.lineTo(x, H); g.stroke();
  drawMarks(tl, t);
}
// where each camera stream's rows were repeated, late or invalid (episode row frame_marks): one lane a
// stream (a 5 px row a kind), on the same x scale as the timeline; a click seeks the videos to that row
const MARK_COLORS = { repeated: "#f44", late: "#eb4", invalid: "#c6f" };
function drawMarks(tl, t) {
  const c = q("#r-marks"), fm = tl.frame_marks || {}, streams = Object.entries(fm.streams || {});
  const lane = 32, top = 14, H = top + Math.max(1, streams.length) * lane + 2;
  if (c.height !== H) c.height = H;
  const g = c.getContext("2d"), W = c.width, span = Math.max(1, tl.rows - 1), xOf = (row) => (row / span) * W;
  g.clearRect(0, 0, W, H); g.font = "11px sans-serif";
  let x = 4;
  for (const [kind, color] of Object.entries(MARK_COLORS)) { g.fillStyle = color; g.fillRect(x, 3, 8, 8); g.fillStyle = "#aaa"; g.fillText(kind, x + 11, 11); x += 70; }
  const layout = { width: W, span, lanes: {} };
  if (!fm.streams) { g.fillStyle = "#888"; g.fillText("no frame marks recorded for this episode (recorded before they were kept)", 4, top + 14); }
  streams.forEach(([sid, m], i) => {
    const y = top + i * lane, notes = [];
    layout.lanes[sid] = {};
    Object.keys(MARK_COLORS).forEach((kind, k) => {
      const e = m[kind], yk = y + 12 + 6 * k; layout.lanes[sid][kind] = yk + 2;
      g.fillStyle = "#1c1f23"; g.fillRect(0, yk, W, 5);
      if (!e) return;
      notes.push(`${kind} ${e.rows} rows` + (e.merged_from ? ` (${e.merged_from} ranges merged to ${e.ranges.length})` : ""));
      g.fillStyle = MARK_COLORS[kind];
      for (const [a, b] of e.ranges) g.fillRect(Math.floor(xOf(a - 0.5)), yk, Math.max(2, xOf(b + 0.5) - xOf(a - 0.5)), 5);
    });
    g.fillStyle = "#999"; g.fillText(`${sid} (${m.video})` + (notes.length ? ": " + notes.join(", ") : ": none repeated or late"), 4, y + 9);
  });
  g.strokeStyle = "#fff"; const cx = (t * tl.fps / span) * W;
  g.beginPath(); g.moveTo(cx, 0); g.lineTo(cx, H); g.stroke();
  window.egorec.marksLayout = layout;
  c.onclick = (ev) => {
    const master = reviewVideos[0] && reviewVideos[0].video; if (!master) return;
    const row = Math.round((ev.offsetX / c.clientWidth) * span);
    for (const { video } of reviewVideos) video.currentTime = row / tl.fps;
    drawTimeline(tl, row / tl.fps);
  };
}

// ---- wiring --------------------------------------------------------------------------------
q("#start").onclick = start; q("#stop").onclick = stop; q("#abort").onclick = abort;
q("#refresh").onclick = loadEpisodes; q("#r-play").onclick = playReview;
q("#r-close").onclick = () => { for (const { video } of reviewVideos) video.pause(); q("#review").hidden = true; };
document.addEventListener("keydown", (ev) => {
  if (ev.target instanceof HTMLInputElement && ev.key !== "F2") return;
  if (ev.key === " " || ev.key === "F2") { ev.preventDefault(); if (recording && busy !== "stop") stop(); else start(); }
  else if (ev.key === "Escape") abort();
  else if (ev.key === "r" && episodes.length) openReview(episodes[episodes.length - 1].episode_index, "");
});
function connect() {
  const es = new EventSource(tq("events"));
  es.onmessage = (m) => render(JSON.parse(m.data));
  es.onerror = () => { q("#state").textContent = "console offline"; q("#state").className = "badge offline"; };
}
connect(); loadEpisodes();
