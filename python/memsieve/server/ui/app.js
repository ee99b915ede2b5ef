// memsieve inspector: plain JavaScript over the REST API (/v1), no build step.
// The key lives in sessionStorage and goes as a bearer token on every call; text from the
// store is only ever set with textContent, never parsed as HTML.
"use strict";

const KEY_SLOT = "memsieve-key";
const $ = (id) => document.getElementById(id);
const state = { scope: null, memories: new Map(), view: "memories", preset: "" };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

function say(text, kind) {
  const s = $("status");
  s.textContent = text;
  s.className = "status" + (kind ? " " + kind : "");
}

function key() { return state.preset || sessionStorage.getItem(KEY_SLOT) || ""; }

class ApiError extends Error {
  constructor(status, type, message) { super(message); this.status = status; this.type = type; }
}

async function api(method, path, { query, body } = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query || {})) if (v !== null && v !== undefined) url.searchParams.set(k, v);
  const headers = { "Accept": "application/json" };
  const k = key();
  if (k) headers["Authorization"] = "Bearer " + k;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await r.json(); } catch (e) { data = null; }
  if (!r.ok) {
    const err = (data && data.error) || { type: "HTTP " + r.status, message: r.statusText };
    throw new ApiError(r.status, err.type, err.message);
  }
  return data;
}

function fail(e) {
  if (e instanceof ApiError) {
    const what = e.status === 401 ? "The API refused access (401)" : `The API answered ${e.status} ${e.type}`;
    say(`${what}: ${e.message}`, "error");
    if (e.status === 401 && !state.preset) $("key").focus();
  } else {
    say("The request failed: " + e.message, "error");
  }
}

// ---- formatting --------------------------------------------------------------------------------

const num = (x, d = 3) => (x === null || x === undefined || Number.isNaN(x) ? "—" : Number(x).toFixed(d));
const day = (iso) => (iso ? iso.replace("T", " ").slice(0, 16) : "—");
// A time in the UTC offset it was given in (seconds east of UTC), as the memory was dated where it was said.
function localDay(iso, offset) {
  const t = iso ? Date.parse(iso) : NaN;
  if (!offset || Number.isNaN(t)) return day(iso);
  const a = Math.abs(offset);
  const two = (n) => String(Math.floor(n)).padStart(2, "0");
  const hhmm = `${two(a / 3600)}:${two((a % 3600) / 60)}`;
  return `${day(new Date(t + offset * 1000).toISOString())} ${offset < 0 ? "-" : "+"}${hhmm}`;
}
const scopeParams = () => Object.fromEntries(Object.entries(state.scope).filter(([, v]) => v !== null));
function scopeName(s) {
  return ["user_id", "agent_id", "run_id"].filter((k) => s[k] !== null && s[k] !== undefined)
    .map((k) => `${k.replace("_id", "")} ${s[k]}`).join(" · ");
}
function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}
function meta(pairs) {
  const dl = el("dl", { class: "meta" });
  for (const [label, value] of pairs) {
    if (value === null || value === undefined || value === "") continue;
    dl.append(el("div", {}, el("dt", { text: label }), el("dd", { text: String(value) })));
  }
  return dl;
}
function memoryLabel(id) {
  const m = state.memories.get(id);
  return m ? `“${m.text}” (${id})` : id;
}

// ---- scopes ------------------------------------------------------------------------------------

async function loadScopes() {
  const data = await api("GET", "/v1/scopes");
  $("who").textContent = state.preset ? "memsieve ui: a local admin key held by this process"
    : `key ${data.key.name}${data.key.admin ? " (admin: every scope)" : ""}`;
  const size = data.store_bytes === null ? "" : `store size ${bytes(data.store_bytes)} · `;
  $("store-size").textContent = `${size}${data.scopes.length} scope(s)` +
    (data.truncated ? " (more not listed)" : "");
  const list = $("scopes");
  list.replaceChildren();
  if (!data.scopes.length) list.append(el("li", { class: "muted", text: "No scope this key grants holds anything yet." }));
  for (const s of data.scopes) {
    const current = state.scope && scopeName(state.scope) === scopeName(s.scope);
    const counts = `${s.active_memories} memories · ${s.rejections} rejections · tau ${num(s.tau)}`;
    list.append(el("li", {}, el("button", { type: "button", class: "scope", "aria-current": current ? "true" : null,
      onclick: () => openScope(s.scope) }, scopeName(s.scope), el("span", { class: "counts", text: counts }))));
  }
  return data;
}

async function openScope(scope) {
  state.scope = scope;
  $("scope-section").hidden = false;
  $("scope-h").textContent = "Scope: " + scopeName(scope);
  for (const b of document.querySelectorAll("#scopes button")) {
    b.setAttribute("aria-current", b.firstChild.textContent === scopeName(scope) ? "true" : "false");
  }
  $("scope-h").focus();
  await showView("memories");
}

async function showView(view) {
  state.view = view;
  for (const b of document.querySelectorAll(".tabs button")) b.setAttribute("aria-pressed", String(b.dataset.view === view));
  for (const v of ["memories", "rejections", "merges", "forget"]) $("view-" + v).hidden = v !== view;
  try {
    if (view === "memories") await listMemories();
    if (view === "rejections") await listRejections();
    if (view === "merges") await listMerges();
  } catch (e) { fail(e); }
}

// ---- memories ----------------------------------------------------------------------------------

async function fetchMemories() {
  const data = await api("GET", "/v1/memories", { query: { ...scopeParams(), include_inactive: "true" } });
  state.memories = new Map(data.memories.map((m) => [m.id, m]));
  return data.memories;
}

function memoryStatus(m) {
  if (!m.is_active) return el("span", { class: "badge bad", text: "inactive" });
  if (m.valid_to || m.expired_at) return el("span", { class: "badge", text: "closed" });
  return el("span", { class: "badge ok", text: "active" });
}

function historyButton(id) {
  const panel = el("div", { class: "detail", id: "hist-" + id, hidden: true });
  const button = el("button", { type: "button", "aria-expanded": "false", "aria-controls": "hist-" + id,
    text: "History", onclick: async () => {
      const open = button.getAttribute("aria-expanded") === "true";
      button.setAttribute("aria-expanded", String(!open));
      panel.hidden = open;
      if (open) return;
      try {
        const data = await api("GET", `/v1/memories/${encodeURIComponent(id)}/history`, { query: scopeParams() });
        const events = el("ol", {}, ...data.history.map((h) => el("li", {},
          el("strong", { text: h.event }), ` ${day(h.created_at)} (${h.layer}): ${h.reason}`,
          h.old_text && h.new_text && h.old_text !== h.new_text ? el("div", { class: "muted",
            text: `“${h.old_text}” → “${h.new_text}”` }) : null)));
        const links = data.links.length ? el("div", {}, el("strong", { text: "Versions and links" }),
          el("ul", {}, ...data.links.map((l) => el("li", { text: `${l.kind}: ${memoryLabel(l.id)}` +
            (l.cosine === null ? "" : ` (cosine ${num(l.cosine)})`) })))) : null;
        panel.replaceChildren(events, links || el("div", { class: "muted", text: "No version links." }));
      } catch (e) { panel.replaceChildren(el("div", { class: "muted", text: e.message })); fail(e); }
    } });
  return [button, panel];
}

function memoryCard(m, hit) {
  const [hbutton, hpanel] = historyButton(m.id);
  const sources = (hit ? hit.sources : m.sources) || [];
  const card = el("li", { class: "card" + (m.is_active === false ? " inactive" : ""), "data-id": m.id },
    el("p", { class: "text", text: hit ? hit.text : m.text }),
    hit && hit.folded && hit.folded.length ? foldedList(hit.folded) : null,
    meta([
      ["score", hit ? `${num(hit.score, 4)} (${$("mode").value})` : null],
      ["created", day(m.created_at || (hit && hit.created_at))],
      ["valid from", m.valid_from || (hit && hit.valid_from)
        ? localDay(m.valid_from || hit.valid_from, m.valid_from ? m.valid_from_offset : hit.valid_from_offset) : null],
      ["valid to", m.valid_to ? day(m.valid_to) : null],
      ["updated", m.updated_at ? day(m.updated_at) : null],
      ["seen", m.seen_count ? `${m.seen_count}×` : null],
      ["sources", sources.join(", ")],
      ["superseded by", hit && hit.superseded_by ? memoryLabel(hit.superseded_by) : null],
      ["id", m.id],
    ]),
    el("div", { class: "actions" }, m.is_active === undefined ? null : memoryStatus(m), hbutton), hpanel);
  return card;
}

// What texts folded into a result say that it does not (search's "folded"), oldest first.
function foldedList(folded) {
  return el("ul", { class: "folded", "aria-label": "Told again, folded into this memory" },
    ...folded.map((f) => el("li", { "data-rejection": f.id },
      el("span", { class: "when", text: `told again ${f.valid_from ? localDay(f.valid_from, f.valid_from_offset)
                                                                    : day(f.created_at)}: ` }),
      f.text)));
}

async function listMemories() {
  const all = await fetchMemories();
  const shown = all.filter((m) => $("inactive").checked || m.is_active)
    .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0));
  $("mem-caption").textContent = `${shown.length} memories, newest first`;
  $("memories").replaceChildren(...shown.slice(0, 500).map((m) => memoryCard(m)));
}

async function search(query) {
  const mode = $("mode").value;
  await fetchMemories();
  const data = await api("POST", "/v1/search", { body: { ...scopeParams(), query, mode, limit: 20 } });
  $("mem-caption").textContent = `${data.results.length} result(s) for “${query}”, ${mode} search, ` +
    (mode === "hybrid" ? "fused (reciprocal-rank) scores" : mode === "dense" ? "cosine scores" : "keyword (bm25) scores");
  $("memories").replaceChildren(...data.results.map((h) => memoryCard(state.memories.get(h.id) || { id: h.id }, h)));
}

// ---- rejections --------------------------------------------------------------------------------

function rejectionCard(r) {
  const result = el("p", { class: "result", role: "status" });
  const restored = (id) => { result.replaceChildren("Restored as memory ", el("code", { text: id })); };
  const button = el("button", { type: "button", text: "Restore", disabled: !!r.restored_memory_id,
    "aria-label": `Restore “${r.text}”`, onclick: async () => {
      button.disabled = true;
      try {
        const data = await api("POST", `/v1/rejections/${encodeURIComponent(r.id)}/restore`, { body: scopeParams() });
        restored(data.memory.id);
        button.textContent = "Restored";
        say(`Restored “${data.memory.text}” as memory ${data.memory.id}.`, "ok");
        await fetchMemories();
        loadScopes().catch(fail);
      } catch (e) { button.disabled = false; fail(e); }
    } });
  if (r.restored_memory_id) { restored(r.restored_memory_id); button.textContent = "Restored"; }
  return el("li", { class: "card", "data-id": r.id },
    el("p", { class: "text", text: r.text }),
    meta([
      ["reason", r.reason], ["layer", r.layer], ["novelty", num(r.novelty)], ["tau", num(r.tau)],
      ["information", num(r.information)],
      ["folded into", r.nearest_id ? memoryLabel(r.nearest_id) : null],
      ["cosine", r.nearest_cos === null ? null : num(r.nearest_cos)],
      ["when", day(r.created_at)], ["sources", (r.sources || []).join(", ")],
      ["forgotten", r.forgotten_at ? day(r.forgotten_at) : null],
    ]),
    el("div", { class: "actions" }, button), result);
}

async function listRejections() {
  await fetchMemories();
  const data = await api("GET", "/v1/rejections", { query: scopeParams() });
  const rows = data.rejections.slice().reverse();
  $("rej-caption").textContent = `${rows.length} rejection(s), newest first`;
  $("rejections").replaceChildren(...rows.map(rejectionCard));
}

// ---- merges ------------------------------------------------------------------------------------

function mergeCard(g) {
  const result = el("p", { class: "result", role: "status" });
  const undone = g.undone_at || g.status === "undone";
  const button = el("button", { type: "button", text: undone ? "Undone" : "Undo", disabled: !!undone,
    "aria-label": `Undo merge ${g.id}`, onclick: async () => {
      button.disabled = true;
      try {
        const data = await api("POST", `/v1/merges/${encodeURIComponent(g.id)}/undo`, { body: scopeParams() });
        button.textContent = "Undone";
        result.textContent = `Undone: ${data.memories.length} memor${data.memories.length === 1 ? "y is" : "ies are"} active again.`;
        say(result.textContent, "ok");
        await fetchMemories();
        loadScopes().catch(fail);
      } catch (e) { button.disabled = false; fail(e); }
    } });
  const members = el("ul", {}, ...g.member_ids.map((id) => el("li", { text: memoryLabel(id) })));
  return el("li", { class: "card" + (undone ? " inactive" : ""), "data-id": g.id },
    el("p", { class: "text", text: `${g.kind}: kept ${memoryLabel(g.kept_id)}` }),
    meta([["reason", g.reason], ["when", day(g.created_at)], ["undone", g.undone_at ? day(g.undone_at) : null],
          ["id", g.id]]),
    el("div", { class: "detail" }, el("strong", { text: `Members (${g.member_ids.length})` }), members),
    el("div", { class: "actions" }, button), result);
}

async function listMerges() {
  await fetchMemories();
  const data = await api("GET", "/v1/merges", { query: { ...scopeParams(), include_undone: String($("undone").checked) } });
  const rows = data.merges.slice().reverse();
  $("merge-caption").textContent = `${rows.length} merge(s), newest first`;
  $("merges").replaceChildren(...rows.map(mergeCard));
}

// ---- forget ------------------------------------------------------------------------------------

const memories = (n) => `${n} memor${n === 1 ? "y" : "ies"}`;
const foldedTexts = (n) => `${n} folded text${n === 1 ? "" : "s"}`;
const memoryList = (rows) => el("ul", {}, ...rows.map((m) => el("li", {}, m.text || "(text erased)", " ",
  el("code", { text: m.id }))));

async function previewForget(what) {
  const box = $("forget-preview");
  const data = await api("POST", "/v1/forget", { body: { ...scopeParams(), what, dry_run: true } });
  const folds = data.folds || [];
  if (!data.removed.length && !folds.length) {
    box.replaceChildren(el("p", { text: `Nothing matches “${what}”: nothing would be removed.` }));
    return;
  }
  const list = memoryList(data.removed);
  // Texts the gate folded into a memory, shown beside it in search: a request that names them takes them
  // out of search, with or without their memory.
  const foldList = el("ul", { class: "folds" }, ...folds.map((r) => el("li", { "data-rejection": r.id },
    r.text, " ", el("code", { text: r.id }), el("span", { class: "muted", text: ` folded into ${r.nearest_id}` }))));
  const confirmBox = el("div", { class: "confirm", hidden: true, tabindex: "-1", id: "forget-confirm" });
  const ask = async (purge) => {
    let warning;
    let named = null;
    if (purge) {
      // A purge by description erases the memory a named folded text went into, with every text it
      // holds: ask the server which memories that is before the user confirms.
      const dry = await api("POST", "/v1/forget", { body: { ...scopeParams(), what, purge: true, dry_run: true } });
      const n = dry.removed.length;
      warning = `Purge erases the text and embedding of ${memories(n)} for good (a tombstone stays), with every `
        + "text folded into them. This cannot be undone.";
      named = memoryList(dry.removed);
    } else {
      const n = data.removed.length;
      warning = `Delete ${memories(n)}${folds.length ? ` and take ${foldedTexts(folds.length)} out of search` : ""}? `
        + "They leave search and stay readable by id.";
    }
    confirmBox.replaceChildren(el("p", { text: warning }), ...(named ? [named] : []), el("div", { class: "actions" },
      el("button", { type: "button", class: purge ? "danger" : "primary", text: purge ? "Yes, purge" : "Yes, delete",
        onclick: async () => {
          try {
            const done = await api("POST", "/v1/forget", { body: { ...scopeParams(), what, purge } });
            const took = (done.folds || []).length;
            box.replaceChildren(el("p", { role: "status",
              text: `${done.purged ? "Purged" : "Deleted"} ${memories(done.removed.length)}`
                + (took ? ` and took ${foldedTexts(took)} out of search.` : ".") }));
            say(box.textContent, "ok");
            await fetchMemories();
            loadScopes().catch(fail);
          } catch (e) { fail(e); }
        } }),
      el("button", { type: "button", text: "Cancel", onclick: () => { confirmBox.hidden = true; } })));
    confirmBox.hidden = false;
    confirmBox.focus();
  };
  const parts = [el("p", { text: `Would remove ${memories(data.removed.length)}` + (data.removed.length ? ":" : ".") })];
  if (data.removed.length) parts.push(list);
  if (folds.length) parts.push(el("p", { text: `Would take ${foldedTexts(folds.length)} out of search:` }), foldList);
  box.replaceChildren(...parts, el("div", { class: "actions" },
      el("button", { type: "button", text: "Delete these", onclick: () => ask(false).catch(fail) }),
      el("button", { type: "button", class: "danger", text: "Purge these", onclick: () => ask(true).catch(fail) })),
    confirmBox);
}

// ---- start -------------------------------------------------------------------------------------

async function connect() {
  try {
    await loadScopes();
    say(state.preset ? "Connected (memsieve ui)." : "Connected.", "ok");
  } catch (e) {
    $("scopes").replaceChildren();
    $("scope-section").hidden = true;
    fail(e);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const tag = document.querySelector('meta[name="memsieve-key"]');
  state.preset = (tag && tag.content) || "";
  if (state.preset) $("key-form").hidden = true;
  $("key-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(KEY_SLOT, $("key").value.trim());
    $("key").value = "";
    connect();
  });
  $("key-clear").addEventListener("click", () => {
    sessionStorage.removeItem(KEY_SLOT);
    state.scope = null;
    $("scope-section").hidden = true;
    $("scopes").replaceChildren();
    $("who").textContent = "";
    say("The key is forgotten; enter one to continue.");
    $("key").focus();
  });
  for (const b of document.querySelectorAll(".tabs button")) b.addEventListener("click", () => showView(b.dataset.view));
  $("search-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = $("q").value.trim();
    (q ? search(q) : listMemories()).catch(fail);
  });
  $("search-clear").addEventListener("click", () => { $("q").value = ""; listMemories().catch(fail); });
  $("inactive").addEventListener("change", () => listMemories().catch(fail));
  $("undone").addEventListener("change", () => listMerges().catch(fail));
  $("forget-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    previewForget($("what").value.trim()).catch(fail);
  });
  connect();
});
