// DOM helpers the widgets build with: a [data-field] node inside a root, a new node of a
// class showing a text (as text, never as markup), a button, a tutorial's row of videos.

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

/** A worked example's videos in a row of the class, in place of the tutorial's `video`
 * (which shows the first): each `[name, media, caption]` a figure named by its caption,
 * the others copies of `video` playing their media. Returns the row. */
export function exemplarRow(video, className, shown) {
  const row = element("div", className);
  video.replaceWith(row);
  shown.forEach(([name, media, caption], index) => {
    let copy = video;
    if (index > 0) {
      copy = video.cloneNode();
      copy.src = media.video_url;
      copy.poster = media.poster_url || "";
    }
    copy.setAttribute("aria-label", caption);
    const figure = element("figure");
    figure.dataset.side = name;
    figure.append(copy, element("figcaption", "", caption));
    row.append(figure);
  });
  return row;
}

/** A tutorial example tried before it is told (a widget's `exemplarTry`): the experts'
 * answer and why in `node` are hidden until `tell`. `show` puts the try's own nodes (what
 * it asks, its controls) before them, then the line that will say how the try went;
 * `tell(text, agrees)` says it (`agrees`: true, false or undefined, its colour) and shows
 * the experts' answer and why. */
export function exemplarTrial(node) {
  const told = [field(node, "answer"), field(node, "note")];
  const shown = told.map((line) => !line.hidden);
  for (const line of told) line.hidden = true;
  const yours = element("p", "exemplar-yours");
  yours.hidden = true;
  yours.setAttribute("aria-live", "polite");
  return {
    show: (...nodes) => told[0].before(...nodes, yours),
    tell(text, agrees) {
      yours.textContent = text;
      if (agrees === undefined) delete yours.dataset.agrees;
      else yours.dataset.agrees = agrees ? "yes" : "no";
      yours.hidden = false;
      told.forEach((line, index) => (line.hidden = !shown[index]));
    },
  };
}
