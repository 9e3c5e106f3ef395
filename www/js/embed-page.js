// embed.html: one <replayground-scenario> built from the page's query string,
// so that hosts that allow no scripts can embed a scenario in an <iframe>.
import { ATTRIBUTES } from './embed.js';

const query = new URLSearchParams(location.search);
const player = document.createElement('replayground-scenario');
for (const name of ATTRIBUTES) {
  if (query.has(name)) player.setAttribute(name, query.get(name));
}
document.body.append(player);
