// DOM helpers the widgets build with: a [data-field] node inside a root, a new node of a
// class showing a text (as text, never as markup), a button.

export const field = (root, name) => root.querySelector(`[data-field="${name}"]`);

export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function button(className, text, onClick) {
  const node = element("button", className, text);
  node.type = "button";
  node.addEventListener("click", onClick);
  return node;
}
