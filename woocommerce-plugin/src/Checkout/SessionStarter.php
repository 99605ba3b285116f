<?php
/**
 * Creates the ServicePay session for an order, on the server.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Checkout;

use ServicePay\WooCommerce\Api\ApiClient;
use ServicePay\WooCommerce\Api\ApiException;
use ServicePay\WooCommerce\Money;
use ServicePay\WooCommerce\Orders\OrderSessions;
use ServicePay\WooCommerce\Orders\PaymentRecord;
use ServicePay\WooCommerce\Orders\Settlement;
use ServicePay\WooCommerce\Orders\SettlementClaim;
use ServicePay\WooCommerce\Orders\StoredOrder;
use ServicePay\WooCommerce\Scheduler\SessionCheck;
use ServicePay\WooCommerce\Settings;

defined( 'ABSPATH' ) || exit;

/**
 * The amount is the order's total in minor units, read here: the browser never sends one. Each attempt (a
 * first "Place order", a retry after a cancel) is a new session, because a client secret opens one checkout
 * only; the attempt number is part of the `Idempotency-Key`, so a retried request makes no second session.
 */
final class SessionStarter {

	/**
	 * Settings.
	 *
	 * @var Settings
	 */
	private Settings $settings;

	/**
	 * API client.
	 *
	 * @var ApiClient
	 */
	private ApiClient $api;

	/**
	 * Builds it.
	 *
	 * @param Settings  $settings Settings.
	 * @param ApiClient $api      Client with the active key.
	 */
	public function __construct( Settings $settings, ApiClient $api ) {
		$this->settings = $settings;
		$this->api      = $api;
	}

	/**
	 * A new session for the order, or `paid` when an earlier attempt turns out to be paid.
	 *
	 * @param \WC_Order $order Order that needs payment.
	 * @return array<string,mixed> `{ paid: bool, clientSecret?, sessionId?, reference?, environment? }`
	 * @throws ApiException When the service refuses.
	 * @throws \InvalidArgumentException When the total cannot be paid in the currency's minor unit.
	 */
	public function start( \WC_Order $order ): array {
		if ( $this->close_previous( $order ) ) {
			return array( 'paid' => true );
		}
		$currency = $order->get_currency();
		$amount   = Money::to_minor( (string) $order->get_total( 'edit' ), $currency );
		$attempt  = (int) $order->get_meta( OrderSessions::ATTEMPT ) + 1;
		$site     = substr( hash( 'sha256', home_url() ), 0, 8 );
		$params   = array(
			'amount'    => $amount,
			'currency'  => $currency,
			'payer'     => $this->payer( $order ),
			'reference' => sprintf( 'wc-%s-%d-%d', $site, $order->get_id(), $attempt ),
			'metadata'  => array(
				'wc_order_id'     => (string) $order->get_id(),
				'wc_order_number' => (string) $order->get_order_number(),
				'wc_site'         => substr( (string) wp_parse_url( home_url(), PHP_URL_HOST ), 0, 500 ),
			),
		);
		$session  = $this->api->create_session( $params, sprintf( 'wc-%s-order-%d-attempt-%d', $site, $order->get_id(), $attempt ) );

		OrderSessions::remember( $order, $session, $attempt );
		$order->add_order_note(
			sprintf(
				/* translators: 1: session id, 2: reference, 3: attempt number */
				__( 'ServicePay session %1$s opened (reference %2$s, attempt %3$d). Waiting for the bank transfer.', 'servicepay-woocommerce' ),
				(string) $session['id'],
				(string) ( $session['reference'] ?? '' ),
				$attempt
			)
		);
		$order->save();
		SessionCheck::schedule( $order->get_id() );

		return array(
			'paid'         => false,
			'clientSecret' => (string) ( $session['clientSecret'] ?? '' ),
			'sessionId'    => (string) $session['id'],
			'reference'    => (string) ( $session['reference'] ?? '' ),
			'environment'  => (string) ( $session['environment'] ?? $this->settings->environment() ),
		);
	}

	/**
	 * Ends the previous attempt's session before a new one is made; true when it turns out to be paid (then
	 * it settles the order instead), unless that payment settled the order before and the shop has since set
	 * the order back to a status that needs payment.
	 *
	 * @param \WC_Order $order Order.
	 * @throws ApiException When the service cannot say.
	 */
	private function close_previous( \WC_Order $order ): bool {
		$previous = OrderSessions::current( $order );
		if ( '' === $previous ) {
			return false;
		}
		try {
			$session = $this->api->get_session( $previous );
		} catch ( ApiException $error ) {
			if ( 404 === $error->status || 403 === $error->status ) {
				return false; // Another environment or a wiped test service: nothing to close.
			}
			throw $error;
		}
		if ( in_array( $session['status'] ?? '', array( 'pending', 'awaiting_payment', 'mismatch' ), true ) ) {
			// The shop ends this session itself: its session.cancelled webhook (which may arrive before the new
			// session is recorded) must not tell the owner that the payer cancelled.
			SettlementClaim::take( 'ended:' . $previous, $order->get_id() );
			try {
				$session = $this->api->cancel_session( $previous );
			} catch ( ApiException $error ) {
				if ( 'session_not_active' !== $error->error_code ) {
					throw $error;
				}
				// It ended meanwhile, perhaps paid: ask again.
				$session = $this->api->get_session( $previous );
			}
		}
		if ( 'successful' === ( $session['status'] ?? '' ) ) {
			Settlement::apply( $order, $session );
			// That payment settled the order before, and the shop set the order back to a status that needs one
			// (pending, failed): it never settles the order again, so a new session pays it.
			$stored = StoredOrder::read( $order->get_id() );
			return ! ( PaymentRecord::settled( $previous ) && $stored instanceof \WC_Order && $stored->needs_payment() );
		}
		return false;
	}

	/**
	 * The payer as the service wants it; the phone only when it has the accepted shape.
	 *
	 * @param \WC_Order $order Order.
	 * @return array<string,string>
	 */
	private function payer( \WC_Order $order ): array {
		$email = (string) $order->get_billing_email();
		$name  = trim( $order->get_billing_first_name() . ' ' . $order->get_billing_last_name() );
		$payer = array(
			'name'  => mb_substr( '' !== $name ? $name : $email, 0, 200 ),
			'email' => $email,
		);
		$phone = trim( (string) $order->get_billing_phone() );
		if ( 1 === preg_match( '/^\+?[0-9 ()\-]{6,20}$/', $phone ) ) {
			$payer['phone'] = $phone;
		}
		return $payer;
	}
}
