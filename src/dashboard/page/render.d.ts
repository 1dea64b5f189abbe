// Types of render.js (plain JS, bundled into the page).
import type { DashboardView } from '../view.js';

/** Draw one view of the session into the page; `labelText` is its label's line (`labelText(view.label)`), shown when it has one. */
export function render(view: DashboardView, labelText: string): void;
/** Show the connection's state in the header. */
export function connection(state: 'connecting' | 'live' | 'reconnecting' | 'ended', text: string): void;
