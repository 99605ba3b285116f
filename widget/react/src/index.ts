export { loadWidget, type PaymentResult, type ServicePayGlobal } from './load-widget.ts';
export {
  DEFAULT_WIDGET_HOSTS,
  PaymentWidget,
  type PaymentWidgetMode,
  type PaymentWidgetProps,
} from './payment-widget.ts';
