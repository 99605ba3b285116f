/** What `widget.js` puts on the page: `window.ServicePay` (the widget's promised interface). */
export interface WidgetSuccess {
  id: string;
  reference: string;
  status: string;
}

export interface WidgetOptions {
  clientSecret: string;
  onSuccess(result: WidgetSuccess): void;
  onError(error: { message: string }): void;
  onCancel(): void;
}

export interface ServicePayGlobal {
  init(options: WidgetOptions): unknown;
}

declare global {
  interface Window {
    ServicePay?: ServicePayGlobal;
  }
}
