import { css } from 'lit';

/** The overlay: a modal dialog in the top layer, a card that fills a phone and floats on a desktop. */
export const checkoutStyles = css`
  :host {
    display: contents;
  }
  dialog {
    box-sizing: border-box;
    position: fixed;
    inset: 0;
    width: 100%;
    height: 100%;
    max-width: none;
    max-height: none;
    margin: 0;
    padding: 16px;
    border: 0;
    background: transparent;
    color-scheme: light dark;
    overflow: hidden;
  }
  dialog[open] {
    display: flex;
    align-items: center;
    justify-content: center;
  }
  dialog::backdrop {
    background: rgb(15 23 42 / 0.62);
  }
  .card {
    position: relative;
    width: min(440px, 100%);
    height: min(700px, 100%);
    border-radius: 16px;
    overflow: hidden;
    background: #ffffff;
    box-shadow: 0 24px 64px rgb(0 0 0 / 0.35);
  }
  iframe {
    display: block;
    width: 100%;
    height: 100%;
    border: 0;
  }
  .close {
    position: absolute;
    top: 10px;
    right: 10px;
    width: 40px;
    height: 40px;
    display: grid;
    place-items: center;
    padding: 0;
    border: 0;
    border-radius: 999px;
    background: transparent;
    color: #334155;
    cursor: pointer;
  }
  .close:hover {
    background: rgb(100 116 139 / 0.16);
  }
  .close:focus-visible {
    outline: 3px solid #2563eb;
    outline-offset: 2px;
  }
  .close svg {
    width: 20px;
    height: 20px;
  }
  .failed {
    display: grid;
    place-content: center;
    gap: 16px;
    height: 100%;
    padding: 32px;
    box-sizing: border-box;
    text-align: center;
    font: 16px/1.5 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif;
    color: #0f172a;
  }
  .failed button {
    justify-self: center;
    min-height: 44px;
    padding: 0 20px;
    border: 0;
    border-radius: 10px;
    background: #1d4ed8;
    color: #ffffff;
    font: inherit;
    font-weight: 600;
    cursor: pointer;
  }
  .failed button:focus-visible {
    outline: 3px solid #2563eb;
    outline-offset: 2px;
  }
  @media (max-width: 480px) {
    dialog {
      padding: 0;
    }
    .card {
      width: 100%;
      height: 100%;
      border-radius: 0;
    }
  }
  @media (prefers-color-scheme: dark) {
    .card {
      background: #0f172a;
    }
    .close {
      color: #e2e8f0;
    }
    .failed {
      color: #e2e8f0;
    }
  }
  @media (prefers-reduced-motion: no-preference) {
    dialog[open] .card {
      animation: rise 160ms ease-out;
    }
  }
  @keyframes rise {
    from {
      opacity: 0;
      transform: translateY(12px);
    }
  }
`;
