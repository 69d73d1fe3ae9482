// Small DOM helpers shared by the board's modules.

export const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

type Child = Node | string | number | null | undefined | false;

/** An element with properties (className, textContent, title, ...), data attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Omit<HTMLElementTagNameMap[K], "dataset" | "style">> & { data?: Record<string, string> } = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  const { data, ...rest } = props;
  Object.assign(el, rest);
  if (data) Object.assign(el.dataset, data);
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "number" ? String(c) : c);
  }
  return el;
}

/** A definition list of label/value pairs (the summaries above the results). */
export function summaryList(pairs: [string, string][], key?: (label: string) => string): HTMLElement {
  const dl = h("dl", { className: "summary" });
  for (const [k, v] of pairs) {
    const dd = h("dd", {}, v);
    if (key) dd.dataset.key = key(k);
    dl.append(h("div", { className: "pair" }, h("dt", {}, k), dd));
  }
  return dl;
}

export interface Column {
  label: string;
  className?: string;      // "mv" (left-aligned, monospace), "left", ...
  title?: string;
}

/** A results table in a scrolling box; cells are text or nodes; each row may carry data attributes and a click. */
export function table(columns: Column[], rows: Child[][], rowData?: (i: number) => Record<string, string>,
  onRow?: (i: number) => void): HTMLElement {
  const t = h("table");
  const head = t.createTHead().insertRow();
  for (const c of columns) {
    const th = h("th", { scope: "col", textContent: c.label });
    if (c.className) th.className = c.className;
    if (c.title) th.title = c.title;
    head.append(th);
  }
  const body = t.createTBody();
  rows.forEach((row, i) => {
    const tr = body.insertRow();
    row.forEach((v, j) => {
      const td = tr.insertCell();
      if (v instanceof Node) td.append(v);
      else if (v !== null && v !== undefined && v !== false) td.textContent = String(v);
      const cls = columns[j]?.className;
      if (cls) td.className = cls;
    });
    if (rowData) Object.assign(tr.dataset, rowData(i));
    if (onRow) {
      tr.tabIndex = 0;
      tr.classList.add("clickable");
      tr.addEventListener("click", () => onRow(i));
      tr.addEventListener("keydown", (e) => {
        if (e.key === "Enter" && e.target === tr) onRow(i);
      });
    }
  });
  return h("div", { className: "scroll" }, t);
}

/** Replace a container's children, keeping the scroll offsets of its scrolling boxes (live updates replace
 * the results many times a second; a user reading row 300 stays there). */
export function replaceKeepingScroll(container: HTMLElement, ...children: Node[]): void {
  const offsets = [...container.querySelectorAll<HTMLElement>(".scroll")].map((e) => [e.scrollTop, e.scrollLeft]);
  container.replaceChildren(...children);
  container.querySelectorAll<HTMLElement>(".scroll").forEach((e, i) => {
    const o = offsets[i];
    if (o) [e.scrollTop, e.scrollLeft] = o;
  });
}

/** Lines or comma-separated items of a text box, trimmed, empty ones dropped. */
export function listOf(text: string): string[] {
  return text.split(/[\n,;]/).map((s) => s.trim()).filter(Boolean);
}
