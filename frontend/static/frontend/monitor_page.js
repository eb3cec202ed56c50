// The monitor page's entry (frontend/templates/frontend/staff/monitor.html): the study's
// slug from its JSON script element and the CSRF token from the page's hidden input, as
// the page's Content-Security-Policy runs no inline script (config/security.py).
import { startMonitor } from "./monitor.js";

const slug = JSON.parse(document.getElementById("study-slug").textContent);
const csrf = document.querySelector("input[name=csrfmiddlewaretoken]").value;
startMonitor({ slug, csrf });
