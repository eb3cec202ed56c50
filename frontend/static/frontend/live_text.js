// Text a screen reader follows (a live region, a cell it may be reading).

/** Write `text` into `node` only when the words change: a live region is read out at
 * each write, even of the same words, so a rewrite at every step of a slider or every
 * poll of a page would be read again and again. */
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}
