// The page's glossary: one `source = target` per line (a line without `=` keeps its term as written; blank
// lines and lines starting with # are skipped), sent with a request as its `glossary` (docs/api.md, "Glossaries").
window.transqGlossary = (function () {
  // {glossary: {...}} to add to a request body, {} when the box is empty; throws naming the line at fault.
  function fields() {
    const box = document.getElementById("glossary");
    const terms = {};
    const lines = box ? box.value.split("\n") : [];
    lines.forEach((line, n) => {
      const text = line.trim();
      if (!text || text.startsWith("#")) return;
      const at = text.indexOf("=");
      const source = (at < 0 ? text : text.slice(0, at)).trim();
      const target = (at < 0 ? text : text.slice(at + 1)).trim();
      if (!source || !target) throw new Error("glossary line " + (n + 1) + ": write `source = target`");
      terms[source] = target;
    });
    const count = Object.keys(terms).length;
    const summary = document.getElementById("glossary-count");
    if (summary) summary.textContent = count ? " (" + count + " terms)" : "";
    return count ? { glossary: terms } : {};
  }
  return { fields };
})();
