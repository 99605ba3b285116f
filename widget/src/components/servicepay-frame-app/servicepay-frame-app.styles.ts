import { css } from 'lit';

/** The checkout screens: readable at 320 px and 200% zoom, light and dark, calm motion only when allowed. */
export const frameAppStyles = css`
  :host {
    --sp-bg: #ffffff;
    --sp-fg: #0f172a;
    --sp-muted: #475569;
    --sp-line: #e2e8f0;
    --sp-panel: #f8fafc;
    --sp-accent: #1d4ed8;
    --sp-accent-fg: #ffffff;
    --sp-focus: #2563eb;
    --sp-ok: #15803d;
    --sp-warn: #b45309;
    --sp-bad: #b91c1c;
    display: flex;
    flex-direction: column;
    min-height: 100vh;
    box-sizing: border-box;
    background: var(--sp-bg);
    color: var(--sp-fg);
    font: 16px/1.5 system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', sans-serif;
  }
  @media (prefers-color-scheme: dark) {
    :host {
      --sp-bg: #0f172a;
      --sp-fg: #f1f5f9;
      --sp-muted: #cbd5e1;
      --sp-line: #334155;
      --sp-panel: #1e293b;
      --sp-accent: #3b82f6;
      --sp-accent-fg: #0b1220;
      --sp-focus: #93c5fd;
      --sp-ok: #4ade80;
      --sp-warn: #fbbf24;
      --sp-bad: #f87171;
    }
  }
  header {
    padding: 20px 64px 16px 24px;
    border-bottom: 1px solid var(--sp-line);
  }
  .merchant {
    margin: 0;
    font-size: 0.95rem;
    color: var(--sp-muted);
    overflow-wrap: anywhere;
  }
  .amount {
    margin: 2px 0 0;
    font-size: 1.75rem;
    font-weight: 700;
    letter-spacing: -0.01em;
    font-variant-numeric: tabular-nums;
  }
  .badge {
    display: inline-block;
    margin-top: 8px;
    padding: 2px 8px;
    border-radius: 999px;
    background: #fef3c7;
    color: #78350f;
    font-size: 0.8rem;
    font-weight: 600;
  }
  main {
    flex: 1;
    display: flex;
    flex-direction: column;
    gap: 16px;
    padding: 20px 24px 24px;
  }
  h1 {
    margin: 0;
    font-size: 1.25rem;
    line-height: 1.3;
  }
  h1:focus {
    outline: none;
  }
  p {
    margin: 0;
  }
  .lead {
    color: var(--sp-muted);
  }
  .details {
    margin: 0;
    border: 1px solid var(--sp-line);
    border-radius: 12px;
    background: var(--sp-panel);
  }
  .row {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    justify-content: space-between;
    gap: 4px 12px;
    padding: 12px 16px;
  }
  .row + .row {
    border-top: 1px solid var(--sp-line);
  }
  dt {
    color: var(--sp-muted);
    font-size: 0.9rem;
  }
  dd {
    margin: 0;
    font-weight: 600;
    overflow-wrap: anywhere;
  }
  .number {
    display: flex;
    align-items: center;
    gap: 8px;
  }
  .digits {
    font-size: 1.35rem;
    font-variant-numeric: tabular-nums;
    letter-spacing: 0.06em;
    font-family: ui-monospace, 'SF Mono', Menlo, Consolas, monospace;
  }
  .countdown {
    display: flex;
    align-items: center;
    gap: 8px;
    color: var(--sp-muted);
    font-variant-numeric: tabular-nums;
  }
  .countdown strong {
    color: var(--sp-fg);
  }
  .countdown.low strong {
    color: var(--sp-warn);
  }
  .note {
    font-size: 0.9rem;
    color: var(--sp-muted);
  }
  .actions {
    display: flex;
    flex-direction: column;
    gap: 10px;
    margin-top: auto;
  }
  button {
    min-height: 44px;
    padding: 0 18px;
    border-radius: 10px;
    font: inherit;
    font-weight: 600;
    cursor: pointer;
  }
  button:focus-visible {
    outline: 3px solid var(--sp-focus);
    outline-offset: 2px;
  }
  button[disabled] {
    cursor: progress;
    opacity: 0.7;
  }
  .primary {
    border: 0;
    background: var(--sp-accent);
    color: var(--sp-accent-fg);
  }
  .secondary {
    border: 1px solid var(--sp-line);
    background: transparent;
    color: var(--sp-fg);
  }
  .copy {
    min-height: 36px;
    padding: 0 12px;
    border: 1px solid var(--sp-line);
    background: var(--sp-bg);
    color: var(--sp-accent);
    font-size: 0.9rem;
  }
  .link {
    min-height: 44px;
    border: 0;
    background: transparent;
    color: var(--sp-accent);
    text-decoration: underline;
  }
  .icon {
    width: 56px;
    height: 56px;
    border-radius: 999px;
    display: grid;
    place-items: center;
    font-size: 1.75rem;
    font-weight: 700;
  }
  .icon.ok {
    background: color-mix(in srgb, var(--sp-ok) 16%, transparent);
    color: var(--sp-ok);
  }
  .icon.warn {
    background: color-mix(in srgb, var(--sp-warn) 16%, transparent);
    color: var(--sp-warn);
  }
  .icon.bad {
    background: color-mix(in srgb, var(--sp-bad) 16%, transparent);
    color: var(--sp-bad);
  }
  .spinner {
    width: 28px;
    height: 28px;
    border-radius: 999px;
    border: 3px solid var(--sp-line);
    border-top-color: var(--sp-accent);
  }
  .pulse {
    width: 10px;
    height: 10px;
    border-radius: 999px;
    background: var(--sp-accent);
  }
  .center {
    display: flex;
    flex-direction: column;
    align-items: center;
    text-align: center;
    gap: 14px;
    padding-top: 12px;
  }
  .compare {
    display: grid;
    grid-template-columns: 1fr 1fr;
    gap: 8px;
    margin: 0;
  }
  .compare div {
    padding: 10px 12px;
    border: 1px solid var(--sp-line);
    border-radius: 10px;
    background: var(--sp-panel);
  }
  .sr-only {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
  }
  @media (prefers-reduced-motion: no-preference) {
    .spinner {
      animation: spin 0.9s linear infinite;
    }
    .pulse {
      animation: pulse 1.4s ease-in-out infinite;
    }
  }
  @keyframes spin {
    to {
      transform: rotate(360deg);
    }
  }
  @keyframes pulse {
    50% {
      opacity: 0.3;
    }
  }
`;
