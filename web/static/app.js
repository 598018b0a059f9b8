// ragd's chat and audit page. Plain JavaScript over ragd's HTTP API; every text from the server
// is put in the page as text (textContent), never as HTML.
"use strict";

const state = {
  conversation: null, // id of the open conversation, null for a new chat
  streaming: null, // {messageId, controller} while an answer streams
  pins: new Set(), // documents to pin with the first question of a new chat
  pinned: new Set(), // documents pinned in the open conversation
  titles: new Map(), // document id -> title, as learned from sources and searches
  cursor: "", // next page of conversations
};

const $ = (id) => document.getElementById(id);
const markerRE = /\[([A-Z]+[1-9][0-9]*(?:\s*[,;]\s*[A-Z]+[1-9][0-9]*)*)\]/g;

// --- API -----------------------------------------------------------------------------------

function headers(extra) {
  const h = Object.assign({}, extra);
  const key = localStorage.getItem("ragd.apiKey");
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}

// api calls the JSON API and throws an Error carrying the problem document's detail.
async function api(method, path, body) {
  const init = { method, headers: headers({ Accept: "application/json" }) };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  if (resp.status === 204) return null;
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error(problemText(resp.status, data));
  return data;
}

function problemText(status, p) {
  if (status === 401 || status === 403) return "Not allowed: set an API key with the right role (" + (p.detail || status) + ")";
  return (p && (p.detail || p.title)) || "HTTP " + status;
}

// dateLabel shows a document's own date as is and an undated one's ingest day as such, as the
// fact sheet does.
function dateLabel(x) {
  return x.date_kind === "ingested" ? "ingested " + x.date : x.date;
}

function newKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

// --- small DOM helpers ---------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function status(text, error) {
  const s = $("status");
  s.textContent = text || "";
  s.classList.toggle("error", !!error);
}

// renderAnswer writes text into node with every citation marker as a link to its cited passage.
function renderAnswer(node, text, messageId) {
  node.replaceChildren();
  let last = 0;
  for (const m of text.matchAll(markerRE)) {
    node.append(text.slice(last, m.index));
    node.append("[");
    m[1].split(/\s*[,;]\s*/).forEach((marker, i) => {
      if (i > 0) node.append(", ");
      node.append(el("a", { href: "#audit-" + messageId + "-" + marker, class: "marker", "data-marker": marker,
        "data-message": messageId, "aria-label": "Cited passage " + marker,
        onclick: (ev) => { ev.preventDefault(); openAudit(messageId, marker); } }, marker));
    });
    node.append("]");
    last = m.index + m[0].length;
  }
  node.append(text.slice(last));
}

// --- messages ------------------------------------------------------------------------------

function addUserMessage(text) {
  const m = el("article", { class: "message user", "aria-label": "You" }, el("p", { class: "who" }, "You"), el("p", { class: "text" }, text));
  $("messages").append(m);
  m.scrollIntoView({ block: "end" });
}

function addAssistantMessage(messageId) {
  const text = el("div", { class: "text answer" });
  const audit = el("button", { type: "button", class: "link", onclick: () => openAudit(messageId) }, "Audit citations");
  const m = el("article", { class: "message assistant", "data-message": messageId || "", "aria-label": "ragd" },
    el("p", { class: "who" }, "ragd"), text, el("p", { class: "actions" }, audit));
  $("messages").append(m);
  return { node: m, text, setId(id) { m.dataset.message = id; messageId = id; } , get id() { return messageId; } };
}

// --- asking, streamed ----------------------------------------------------------------------

// parseEvents reads Server-Sent Events from a fetch response body (EventSource cannot POST).
async function* parseEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value.replace(/\r\n?/g, "\n");
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let type = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) type = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) yield { type, data: JSON.parse(data.join("\n")) };
    }
  }
}

async function ask(question) {
  const body = { message: question };
  if (state.conversation) body.conversation_id = state.conversation;
  const hint = $("mode-hint").value;
  if (hint) body.mode_hint = hint;
  if (!state.conversation && state.pins.size) body.pins = Array.from(state.pins);

  addUserMessage(question);
  const reply = addAssistantMessage("");
  reply.node.setAttribute("aria-busy", "true");
  const controller = new AbortController();
  state.streaming = { controller, reply };
  $("ask").disabled = true;
  $("stop").hidden = false;
  $("turn-sources").replaceChildren();
  status("Searching…");
  let answer = "";
  let finished = false;
  try {
    const resp = await fetch("/v1/ask", { method: "POST", signal: controller.signal,
      headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream", "Idempotency-Key": newKey() }),
      body: JSON.stringify(body) });
    if (!resp.ok) throw new Error(problemText(resp.status, await resp.json().catch(() => ({}))));
    for await (const ev of parseEvents(resp.body)) {
      switch (ev.type) {
        case "meta":
          reply.setId(ev.data.message_id);
          if (state.conversation !== ev.data.conversation_id) {
            state.conversation = ev.data.conversation_id;
            state.pins.clear();
            showPendingPins();
          }
          status("Mode " + ev.data.mode.label.toLowerCase() + ", " + ev.data.turn_intent.label + ": reading sources…");
          break;
        case "source":
          addSource(ev.data);
          break;
        case "context":
          status("Answering…");
          break;
        case "answer":
          answer += ev.data.delta;
          renderAnswer(reply.text, answer, reply.id);
          break;
        case "done":
          renderAnswer(reply.text, ev.data.answer, reply.id);
          finished = true;
          status("");
          break;
        case "stopped":
          renderAnswer(reply.text, ev.data.answer, reply.id);
          reply.node.append(el("p", { class: "note" }, "Stopped."));
          finished = true;
          status("Stopped.");
          break;
        case "error":
          throw new Error(ev.data.detail || ev.data.title);
      }
    }
    if (!finished && controller.signal.aborted) status("Stopped.");
  } catch (err) {
    if (controller.signal.aborted) {
      reply.node.append(el("p", { class: "note" }, "Stopped."));
      status("Stopped.");
    } else {
      reply.node.append(el("p", { class: "note error" }, "Failed: " + err.message));
      status("The question failed: " + err.message, true);
    }
  } finally {
    reply.node.removeAttribute("aria-busy");
    state.streaming = null;
    $("ask").disabled = false;
    $("stop").hidden = true;
    await Promise.all([loadConversations(), loadConversationSources()]);
  }
}

// stop asks the server to end the stream (it records the turn as stopped, with what was sent);
// closing the connection is the fallback and stops it as well.
async function stop() {
  const s = state.streaming;
  if (!s) return;
  if (s.reply.id) {
    try {
      await api("POST", "/v1/messages/" + s.reply.id + "/stop");
      return;
    } catch (err) {
      // Not streaming from this server any more, or not allowed: close the connection.
    }
  }
  s.controller.abort();
}

// --- sources and pins ----------------------------------------------------------------------

function pinButton(docId) {
  const pinned = () => state.pinned.has(docId) || (!state.conversation && state.pins.has(docId));
  const b = el("button", { type: "button", class: "pin", "data-doc": docId });
  const paint = () => {
    b.textContent = pinned() ? "Unpin" : "Pin";
    b.setAttribute("aria-pressed", pinned() ? "true" : "false");
  };
  b.addEventListener("click", async () => {
    try {
      await setPin(docId, !pinned());
    } catch (err) {
      status("Pinning failed: " + err.message, true);
    }
    paintPins();
  });
  b.paint = paint;
  paint();
  return b;
}

function paintPins() {
  for (const b of document.querySelectorAll("button.pin")) b.paint();
}

async function setPin(docId, on) {
  if (!state.conversation) {
    // A new chat: the pins go with its first question.
    if (on) state.pins.add(docId); else state.pins.delete(docId);
    showPendingPins();
    return;
  }
  await api(on ? "PUT" : "DELETE", "/v1/conversations/" + state.conversation + "/pins/" + docId);
  status(on ? "Pinned: carried into every later turn." : "Unpinned.");
  await loadConversationSources();
}

function showPendingPins() {
  const n = state.pins.size;
  $("pending-pins").textContent = n ? n + " pinned for this chat" : "";
}

function addSource(s) {
  state.titles.set(s.doc_id, s.title);
  const facts = el("ul", { class: "facts" });
  for (const f of s.facts) {
    facts.append(el("li", { id: "fact-" + f.marker }, el("span", { class: "marker-tag" }, f.marker), " ", f.text));
  }
  const where = [dateLabel(s), s.pages ? "pages " + s.pages.start + "–" + s.pages.end : null, "v" + s.version].filter(Boolean).join(" · ");
  const card = el("li", { class: "card", "data-doc": s.doc_id, "data-letter": s.letter },
    el("div", { class: "card-head" },
      el("span", { class: "letter", "aria-label": "Letter " + s.letter }, s.letter),
      el("span", { class: "title" }, s.title || "Untitled"),
      pinButton(s.doc_id)),
    el("p", { class: "meta" }, where + " · " + s.origins.join(", ")),
    facts,
    el("details", {}, el("summary", {}, "Passage"), el("p", { class: "passage" }, s.text)));
  $("turn-sources").append(card);
}

// sourceState says why a source is listed: a deleted document is never carried, though its pin
// stands (and counts) until unpinned.
function sourceState(s) {
  if (s.deleted) return s.pinned ? "pinned · deleted, not carried" : "deleted, not carried";
  return s.pinned ? "pinned" : "carry " + s.carry_score.toFixed(2);
}

async function loadConversationSources() {
  const list = $("conversation-sources");
  state.pinned.clear();
  if (!state.conversation) {
    list.replaceChildren();
    paintPins();
    return;
  }
  try {
    const data = await api("GET", "/v1/conversations/" + state.conversation + "/sources");
    list.replaceChildren();
    for (const s of data.sources) {
      if (s.pinned) state.pinned.add(s.doc_id);
      if (!s.carried && !s.pinned) continue;
      list.append(el("li", { "data-doc": s.doc_id },
        el("span", { class: "letter" }, s.letter), " ",
        el("span", { class: "title" }, state.titles.get(s.doc_id) || s.doc_id.slice(0, 8)), " ",
        el("span", { class: "meta" }, sourceState(s)), " ",
        pinButton(s.doc_id)));
    }
  } catch (err) {
    status("Reading the conversation's sources failed: " + err.message, true);
  }
  paintPins();
}

async function searchDocuments(q) {
  try {
    const data = await api("GET", "/v1/documents?limit=10&q=" + encodeURIComponent(q));
    const list = $("doc-results");
    list.replaceChildren();
    for (const d of data.documents) {
      state.titles.set(d.id, d.title);
      list.append(el("li", { "data-doc": d.id },
        el("span", { class: "title" }, d.title || "Untitled"), " ",
        el("span", { class: "meta" }, dateLabel(d) + " · " + d.source), " ",
        pinButton(d.id)));
    }
    if (!data.documents.length) list.append(el("li", { class: "meta" }, "No document matches."));
  } catch (err) {
    status("Searching documents failed: " + err.message, true);
  }
}

// --- conversations -------------------------------------------------------------------------

async function loadConversations(more) {
  try {
    const q = more && state.cursor ? "?cursor=" + encodeURIComponent(state.cursor) : "";
    const data = await api("GET", "/v1/conversations" + q);
    const list = $("conversation-list");
    if (!more) list.replaceChildren();
    for (const c of data.conversations) list.append(conversationItem(c));
    state.cursor = data.next_cursor || "";
    $("more-conversations").hidden = !state.cursor;
  } catch (err) {
    status("Listing conversations failed: " + err.message, true);
  }
}

function conversationItem(c) {
  const name = c.title || c.preview || "Untitled";
  const li = el("li", { "data-conversation": c.id });
  const open = el("button", { type: "button", class: "open", "aria-current": c.id === state.conversation ? "true" : null,
    title: name, onclick: () => openConversation(c.id) }, name);
  const actions = el("span", { class: "row-actions" });
  const showActions = () => {
    actions.replaceChildren(
      el("button", { type: "button", class: "small rename", "aria-label": "Rename " + name, onclick: renaming }, "Rename"),
      el("button", { type: "button", class: "small danger delete", "aria-label": "Delete " + name, onclick: deleting }, "Delete"));
  };
  // Renaming edits the title in place: Enter or Save keeps it, Escape or Cancel leaves it.
  function renaming() {
    const input = el("input", { type: "text", class: "title-input", maxlength: "200", value: c.title || "",
      "aria-label": "New title (empty clears it)" });
    const form = el("form", { class: "rename-form", onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        await api("PATCH", "/v1/conversations/" + c.id, { title: input.value });
        status("Renamed.");
        await loadConversations();
      } catch (err) {
        status("Renaming failed: " + err.message, true);
      }
    } }, input, el("button", { type: "submit", class: "small" }, "Save"),
      el("button", { type: "button", class: "small", onclick: showActions }, "Cancel"));
    input.addEventListener("keydown", (ev) => { if (ev.key === "Escape") showActions(); });
    actions.replaceChildren(form);
    input.focus();
  }
  // Deleting asks once more, and says what deletion means.
  function deleting() {
    actions.replaceChildren(
      el("span", { class: "meta" }, "Hide from chat? Auditors keep it."),
      el("button", { type: "button", class: "small danger confirm-delete", onclick: async () => {
        try {
          await api("DELETE", "/v1/conversations/" + c.id);
          if (state.conversation === c.id) newChat();
          status("Deleted from the chat; its citations stay for auditors.");
          await loadConversations();
        } catch (err) {
          status("Deleting failed: " + err.message, true);
        }
      } }, "Delete"),
      el("button", { type: "button", class: "small", onclick: showActions }, "Cancel"));
  }
  showActions();
  li.append(open, actions);
  return li;
}

async function openConversation(id) {
  try {
    const c = await api("GET", "/v1/conversations/" + id);
    state.conversation = id;
    state.pins.clear();
    showPendingPins();
    $("messages").replaceChildren();
    $("turn-sources").replaceChildren();
    for (const m of c.messages) {
      if (m.role === "user") addUserMessage(m.content);
      else {
        const r = addAssistantMessage(m.id);
        renderAnswer(r.text, m.content, m.id);
        if (m.stopped_at) r.node.append(el("p", { class: "note" }, "Stopped."));
      }
    }
    for (const s of c.sources) if (!state.titles.has(s.doc_id)) await learnTitle(s.doc_id);
    await Promise.all([loadConversations(), loadConversationSources()]);
    status("");
  } catch (err) {
    status("Opening the conversation failed: " + err.message, true);
  }
}

async function learnTitle(docId) {
  try {
    const d = await api("GET", "/v1/documents/" + docId);
    state.titles.set(docId, d.title);
  } catch (err) {
    // A title is a nicety: the letter still names the source.
  }
}

function newChat() {
  if (state.streaming) return;
  state.conversation = null;
  state.pins.clear();
  state.pinned.clear();
  showPendingPins();
  $("messages").replaceChildren();
  $("turn-sources").replaceChildren();
  $("conversation-sources").replaceChildren();
  for (const b of document.querySelectorAll("#conversation-list [aria-current]")) b.removeAttribute("aria-current");
  paintPins();
  $("question").focus();
}

// --- audit ---------------------------------------------------------------------------------

// openAudit shows every citation of a message: the marker, the fact, the passage as cited with
// the fact marked in it, and the document version it came from.
async function openAudit(messageId, focusMarker) {
  if (!messageId) return;
  const dlg = $("audit");
  const list = $("audit-list");
  list.replaceChildren();
  $("audit-summary").textContent = "Reading the citations…";
  if (!dlg.open) dlg.showModal();
  try {
    const data = await api("GET", "/v1/messages/" + messageId + "/citations");
    $("audit-summary").textContent = data.citations.length + " citations of message " + messageId;
    let focus = null;
    for (const c of data.citations) {
      const doc = c.document;
      const where = ["version " + doc.version, c.pages ? "pages " + c.pages.start + "–" + c.pages.end : null,
        "chunk " + c.chunk.id, "rank " + c.rank, "score " + c.score.toFixed(3), "found by " + c.origin].filter(Boolean).join(" · ");
      const item = el("li", { id: "audit-" + messageId + "-" + c.marker, class: "citation", "data-marker": c.marker, tabindex: "-1" },
        el("p", {}, el("span", { class: "marker-tag" }, c.marker), " ", el("q", {}, c.fact)),
        el("p", { class: "meta" }, el("span", { class: "doc-title" }, doc.title || "Untitled"), " · ", where,
          webURL(doc.url) ? " · " : null, webURL(doc.url) ? el("a", { href: doc.url, rel: "noreferrer noopener", target: "_blank" }, doc.url) : null),
        passageWithFact(c.chunk.text, c.fact));
      list.append(item);
      if (c.marker === focusMarker) focus = item;
    }
    if (focus) {
      focus.classList.add("focused");
      focus.scrollIntoView({ block: "center" });
      focus.focus();
    }
  } catch (err) {
    $("audit-summary").textContent = "Reading the citations failed: " + err.message;
  }
}

// webURL reports whether a document's URL is one to link to: http(s) only, so a URL a document
// carried cannot run script when clicked.
function webURL(u) {
  return typeof u === "string" && /^https?:\/\//i.test(u);
}

function passageWithFact(passage, fact) {
  const p = el("blockquote", { class: "passage" });
  const i = passage.indexOf(fact);
  if (i < 0) {
    p.append(passage);
  } else {
    p.append(passage.slice(0, i), el("mark", {}, fact), passage.slice(i + fact.length));
  }
  return p;
}

// --- wiring --------------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  $("api-key").value = localStorage.getItem("ragd.apiKey") || "";
  $("key-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const key = $("api-key").value.trim();
    if (key) localStorage.setItem("ragd.apiKey", key); else localStorage.removeItem("ragd.apiKey");
    status(key ? "API key saved in this browser." : "API key removed.");
    loadConversations();
  });
  $("ask-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = $("question").value.trim();
    if (!q || state.streaming) return;
    $("question").value = "";
    ask(q);
  });
  $("question").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey) {
      ev.preventDefault();
      $("ask-form").requestSubmit();
    }
  });
  $("stop").addEventListener("click", stop);
  $("new-chat").addEventListener("click", newChat);
  $("more-conversations").addEventListener("click", () => loadConversations(true));
  let timer = null;
  $("doc-query").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => searchDocuments($("doc-query").value), 200);
  });
  $("doc-search").addEventListener("submit", (ev) => {
    ev.preventDefault();
    searchDocuments($("doc-query").value);
  });
  $("audit-close").addEventListener("click", () => $("audit").close());
  loadConversations();
  searchDocuments("");
});
