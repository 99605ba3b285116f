<?php
/**
 * The WooCommerce payment gateway `servicepay`.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce;

use ServicePay\WooCommerce\Admin\SettingsForm;
use ServicePay\WooCommerce\Api\ServiceProfile;
use ServicePay\WooCommerce\Checkout\CheckoutController;
use ServicePay\WooCommerce\Orders\OrderSessions;
use ServicePay\WooCommerce\Orders\Refunds;
use ServicePay\WooCommerce\Orders\SettlementClaim;
use ServicePay\WooCommerce\Webhooks\EndpointStore;

defined( 'ABSPATH' ) || exit;

/**
 * Settings, the classic checkout and `process_payment`. The order is left pending by `process_payment`:
 * it is paid only when the service says so (a verified webhook, the return from the widget, or the check).
 */
class Gateway extends \WC_Payment_Gateway {
	use SettingsForm;

	public const ID = 'servicepay';

	/** Sets the gateway up. */
	public function __construct() {
		$this->id                 = self::ID;
		$this->has_fields         = false;
		$this->method_title       = __( 'ServicePay bank transfer', 'servicepay-woocommerce' );
		$this->method_description = __( 'Customers pay by bank transfer to a one-time account number; the order is marked paid as soon as the transfer arrives.', 'servicepay-woocommerce' );
		$this->supports           = array( 'products', 'refunds' );
		$this->init_form_fields();
		$this->init_settings();
		$this->title       = $this->get_option( 'title' );
		$this->description = $this->get_option( 'description' );
		// The order screen links the transaction id (the session id) to the session's page in the portal.
		$this->view_transaction_url = Settings::load()->api_url() . '/portal/sessions/%s';
		add_action( 'woocommerce_update_options_payment_gateways_' . $this->id, array( $this, 'process_admin_options' ) );
		add_action( 'woocommerce_receipt_' . $this->id, array( $this, 'receipt_page' ) );
	}

	/**
	 * Offered at checkout only where it works: a key for the active environment, the store's currency among
	 * those the service takes, and the total to pay (the cart's, or the order's on its pay page) within that
	 * currency's bounds. Otherwise a payer would place an order that the service then refuses.
	 */
	public function is_available() {
		$settings = Settings::load();
		if ( ! parent::is_available() || ! $settings->is_ready() ) {
			return false;
		}
		ServiceProfile::refresh_if_stale( $settings );
		[ $currency, $total ] = $this->total_to_pay();
		return '' === ServiceProfile::refusal( $settings->environment(), $currency, $total );
	}

	/**
	 * The currency and the total the checkout would pay: the order's on its pay page, else the cart's (null
	 * when neither is known, as in the admin), rounded to the currency's minor unit.
	 *
	 * @return array{0:string,1:string|null}
	 */
	private function total_to_pay(): array {
		$order_id = absint( get_query_var( 'order-pay' ) );
		$order    = $order_id > 0 ? wc_get_order( $order_id ) : null;
		if ( $order instanceof \WC_Order ) {
			$currency = $order->get_currency();
			$total    = (float) $order->get_total( 'edit' );
		} else {
			$currency = get_woocommerce_currency();
			$total    = function_exists( 'WC' ) && WC()->cart ? (float) WC()->cart->get_total( 'edit' ) : 0.0;
		}
		return array( $currency, $total > 0 ? number_format( $total, Money::exponent( $currency ), '.', '' ) : null );
	}

	/**
	 * Places the order without paying it. The Blocks checkout opens the widget before following the redirect
	 * (to the order-received page); the classic checkout goes to the order-pay page, which opens it.
	 *
	 * @param int $order_id Order id.
	 * @return array{result:string,redirect:string}
	 */
	public function process_payment( $order_id ) {
		$order = wc_get_order( $order_id );
		if ( ! $order instanceof \WC_Order ) {
			return array(
				'result'   => 'failure',
				'redirect' => '',
			);
		}
		$is_blocks = defined( 'REST_REQUEST' ) && REST_REQUEST;
		return array(
			'result'   => 'success',
			'redirect' => $is_blocks ? $this->get_return_url( $order ) : $order->get_checkout_payment_url( true ),
		);
	}

	/**
	 * Refunds from the order screen (WooCommerce's refund path, after it saved its own refund): see `Refunds`.
	 *
	 * @param int        $order_id Order id.
	 * @param float|null $amount   Amount to refund, in the order's currency.
	 * @param string     $reason   Why.
	 * @return bool|\WP_Error
	 */
	public function process_refund( $order_id, $amount = null, $reason = '' ) {
		$order = wc_get_order( $order_id );
		if ( ! $order instanceof \WC_Order ) {
			return new \WP_Error( 'servicepay_refund', __( 'No such order.', 'servicepay-woocommerce' ) );
		}
		return Refunds::process( $order, null === $amount || '' === $amount ? null : $amount, (string) $reason );
	}

	/**
	 * The classic order-pay page: a button that opens the widget (and opens it at once).
	 *
	 * @param int $order_id Order id.
	 */
	public function receipt_page( $order_id ): void {
		$order = wc_get_order( $order_id );
		if ( ! $order instanceof \WC_Order || ! $order->needs_payment() ) {
			return;
		}
		Plugin::enqueue_classic_script( $order );
		$theme_class = wc_wp_theme_get_element_class_name( 'button' );
		echo '<div id="servicepay-pay" class="servicepay-pay">';
		echo '<p>' . esc_html__( 'Pay by bank transfer: we will show you a one-time account number and the exact amount.', 'servicepay-woocommerce' ) . '</p>';
		// What the script may have to say, rendered by WooCommerce's own notice templates (so the theme styles
		// them as every other notice) and shown in the live region when the payer comes back from the widget.
		echo '<div class="servicepay-notices" hidden>';
		foreach ( self::pay_page_notices() as $outcome => $notice ) {
			echo '<div data-servicepay-outcome="' . esc_attr( $outcome ) . '">' . wc_print_notice( $notice[0], $notice[1], array(), true ) . '</div>'; // phpcs:ignore WordPress.Security.EscapeOutput.OutputNotEscaped -- WooCommerce's template escapes the notice.
		}
		echo '</div>';
		echo '<div class="servicepay-notice" aria-live="polite"></div>';
		// WooCommerce's own button classes, as its pay-for-order button has them (the theme's button look).
		echo '<button type="button" class="button alt servicepay-open' . esc_attr( $theme_class ? ' ' . $theme_class : '' ) . '">' . esc_html__( 'Pay by bank transfer', 'servicepay-woocommerce' ) . '</button>';
		echo '</div>';
	}

	/**
	 * The order-pay page's notices for each way the widget can end without taking the payer away, with
	 * WooCommerce's notice type. `error` carries an empty slot the script fills with the message.
	 *
	 * @return array<string,array{0:string,1:string}>
	 */
	private static function pay_page_notices(): array {
		return array(
			'cancelled' => array( __( 'You closed the bank transfer before paying. Your order is saved: press "Pay by bank transfer" to get a new account number.', 'servicepay-woocommerce' ), 'notice' ),
			'expired'   => array( __( 'The time to pay by bank transfer ran out before your transfer arrived. Your order is saved: press "Pay by bank transfer" to get a new account number.', 'servicepay-woocommerce' ), 'notice' ),
			'error'     => array( '<span class="servicepay-notice-text"></span>', 'error' ),
		);
	}

	/**
	 * The order-received page of an order put on hold because the amount paid is not its total (it was edited
	 * after the payment was set up): the payer is told the truth before WooCommerce's thank-you.
	 *
	 * @param int $order_id Order id.
	 */
	public static function explain_order_on_hold( $order_id ): void {
		$order = wc_get_order( (int) $order_id );
		if ( ! $order instanceof \WC_Order || ! OrderSessions::is_ours( $order ) || ! $order->has_status( 'on-hold' ) ) {
			return;
		}
		if ( ! SettlementClaim::exists( 'amount-mismatch:' . OrderSessions::current( $order ) ) ) {
			return;
		}
		wc_print_notice( __( 'We received your bank transfer, but it does not match this order\'s total, which changed after your payment was set up. The shop will check your order and contact you; you do not need to pay again.', 'servicepay-woocommerce' ), 'notice' );
	}

	/**
	 * Data the checkout scripts need (no key, no amount).
	 *
	 * @return array<string,mixed>
	 */
	public static function script_data(): array {
		$settings = Settings::load();
		return array(
			'restPath'   => '/' . CheckoutController::NAMESPACE,
			'nonce'      => wp_create_nonce( CheckoutController::NONCE_ACTION ),
			'title'      => $settings->get( 'title' ),
			// Where bank transfer works, for a checkout that changes currency without asking the server again.
			'currencies' => array_keys( ServiceProfile::currencies( $settings->environment() ) ?? array() ),
		);
	}

	/**
	 * Whether both environments' webhooks are registered (admin notices).
	 *
	 * @param string $environment Environment.
	 */
	public static function webhook_ready( string $environment ): bool {
		return EndpointStore::has_readable_secret( $environment );
	}
}
