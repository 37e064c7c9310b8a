// A job's Server-Sent Events (GET /v1/jobs/<id>/events) read with fetch() rather than EventSource, because
// EventSource cannot send an Authorization header: one code path with an API key and without. The stream is
// parsed as the SSE spec says (fields `id`, `event`, `data`, `retry`; lines starting with ":" are comments), and a
// stream that ends before `done` (the server's time or idle limit, a dropped connection) is read again from
// after the last event's id (Last-Event-ID), so nothing is missed.
window.transqEvents = (function () {
  const MAX_RECONNECTS = 20;  // in a row without an event between them: then the caller polls instead

  // Feeds text in as it arrives; calls dispatch({id, event, data}) for each complete event.
  function parser(dispatch) {
    let buffer = "", data = [], event = "", id = null, retry = null;
    function line(text) {
      if (text === "") {  // a blank line ends an event
        if (data.length) dispatch({ id, event: event || "message", data: data.join("\n") });
        data = []; event = "";
        return;
      }
      if (text.startsWith(":")) return;  // a comment (the heartbeat)
      const at = text.indexOf(":");
      const field = at < 0 ? text : text.slice(0, at);
      let value = at < 0 ? "" : text.slice(at + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") data.push(value);
      else if (field === "event") event = value;
      else if (field === "id" && !value.includes("\0")) id = value;
      else if (field === "retry" && /^\d+$/.test(value)) retry = Number(value);
    }
    return {
      feed(text) {
        buffer += text;
        const lines = buffer.split(/\r\n|\r|\n/);
        buffer = lines.pop();  // an unfinished line waits for the rest
        lines.forEach(line);
      },
      retry: () => retry,
    };
  }

  // Follows the job; handlers.<event>(parsed JSON data) for each event. Resolves with `done`'s data; rejects
  // when the server refuses the stream (an HTTP error) or it is lost MAX_RECONNECTS times in a row.
  async function follow(jobId, headers, handlers) {
    let lastId = null, failures = 0, wait = 1000;
    for (;;) {
      const h = Object.assign({ Accept: "text/event-stream" }, headers);
      if (lastId) h["Last-Event-ID"] = lastId;
      let done = null, heard = false;
      try {
        const response = await fetch("/v1/jobs/" + encodeURIComponent(jobId) + "/events", { headers: h, cache: "no-store" });
        if (!response.ok) throw Object.assign(new Error("event stream refused (HTTP " + response.status + ")"), { final: true });
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        const stream = parser((e) => {
          heard = true;
          if (e.id) lastId = e.id;
          const data = JSON.parse(e.data);
          if (e.event === "done") done = data;
          else if (handlers[e.event]) handlers[e.event](data);
        });
        while (done === null) {
          const { value, done: ended } = await reader.read();
          if (ended) break;
          stream.feed(value);
        }
        if (stream.retry() !== null) wait = stream.retry();
        if (done !== null) { reader.cancel().catch(() => {}); return done; }
      } catch (error) {
        if (error.final) throw error;
      }
      failures = heard ? 0 : failures + 1;
      if (failures >= MAX_RECONNECTS) throw new Error("event stream lost");
      await new Promise((r) => setTimeout(r, heard ? 0 : wait));
    }
  }

  return { follow, parser };
})();
