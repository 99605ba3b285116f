<?php
/**
 * Refunds from the order screen, and the bank's answer to them.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Orders;

use ServicePay\WooCommerce\Api\ApiClient;
use ServicePay\WooCommerce\Api\ApiException;
use ServicePay\WooCommerce\Logger;
use ServicePay\WooCommerce\Money;
use ServicePay\WooCommerce\Settings;

defined( 'ABSPATH' ) || exit;

/**
 * WooCommerce refunds an order through `Gateway::process_refund`, after it saved its own refund: this asks the
 * service to send the money back to the account the payer paid from, with an `Idempotency-Key` made from
 * WooCommerce's refund id (a retried request refunds once). The order gets one note per refund with the
 * service's refund id, and one more when the bank's answer arrives by webhook. A refund the service or the
 * bank refuses at once is answered as an error, so WooCommerce deletes its own refund and shows the message on
 * the order screen; one the bank refuses later (`refund.failed`) is noted on the order and the order is put on
 * hold, so the shop owner sees that the payer did not get the money back.
 */
final class Refunds {

	/** Meta on WooCommerce's refund: the service's refund id. */
	public const REFUND_ID = '_servicepay_refund_id';

	/**
	 * WooCommerce's refunds being created in this request, by order id: `process_refund` is not told which.
	 *
	 * @var array<int,\WC_Order_Refund>
	 */
	private static array $creating = array();

	/** Hooks what the refund path needs. */
	public static function register(): void {
		add_action( 'woocommerce_create_refund', array( self::class, 'remember_creating' ), 10, 1 );
	}

	/**
	 * Remembers the refund WooCommerce is about to save (it has its id by the time the gateway is asked).
	 *
	 * @param mixed $refund WooCommerce's refund.
	 */
	public static function remember_creating( $refund ): void {
		if ( $refund instanceof \WC_Order_Refund ) {
			self::$creating[ (int) $refund->get_parent_id() ] = $refund;
		}
	}

	/**
	 * Refunds `$amount` (the order's currency, as WooCommerce passes it) of the order's paid session.
	 *
	 * @param \WC_Order  $order  Order.
	 * @param float|null $amount Amount in major units; null: what is left to refund at the service.
	 * @param string     $reason WooCommerce's reason text (kept on WooCommerce's refund; the service gets a code).
	 * @return true|\WP_Error
	 */
	public static function process( \WC_Order $order, $amount, string $reason ) {
		$session_id = (string) $order->get_transaction_id();
		if ( '' === $session_id || ! OrderSessions::owns( $order, $session_id ) ) {
			return new \WP_Error( 'servicepay_refund', __( 'This order was not paid through ServicePay, so ServicePay cannot refund it.', 'servicepay-woocommerce' ) );
		}
		$refund    = self::$creating[ $order->get_id() ] ?? null;
		$refund_id = $refund instanceof \WC_Order_Refund ? (int) $refund->get_id() : 0;
		if ( $refund_id <= 0 ) {
			return new \WP_Error( 'servicepay_refund', __( 'Refund this order from its order screen, so that the refund has an id to send to ServicePay.', 'servicepay-woocommerce' ) );
		}
		$currency = $order->get_currency();
		$params   = array( 'reason' => 'requested_by_customer' );
		if ( null !== $amount ) {
			$params['amount'] = Money::to_minor( (string) $amount, $currency );
		}
		$site = substr( hash( 'sha256', home_url() ), 0, 8 );
		try {
			$answer = self::client( $order )->create_refund( $session_id, $params, sprintf( 'wc-%s-refund-%d', $site, $refund_id ) );
		} catch ( ApiException $error ) {
			Logger::warning( 'refund refused', array( 'orderId' => $order->get_id(), 'code' => $error->error_code ) );
			$order->add_order_note(
				/* translators: %s: the service's message */
				sprintf( __( 'ServicePay did not refund: %s', 'servicepay-woocommerce' ), $error->getMessage() )
			);
			return new \WP_Error( 'servicepay_refund', $error->getMessage() );
		}
		$service_id = (string) ( $answer['id'] ?? '' );
		$minor      = (int) ( $answer['amount'] ?? 0 );
		$refund->update_meta_data( self::REFUND_ID, $service_id );
		$refund->save_meta_data();
		if ( 'failed' === ( $answer['status'] ?? '' ) ) {
			$order->add_order_note(
				sprintf(
					/* translators: 1: amount, 2: currency, 3: refund id, 4: why the bank refused */
					__( 'ServicePay refund %3$s of %1$s %2$s was refused by the payer\'s bank (%4$s): no money went back. The refund was not recorded.', 'servicepay-woocommerce' ),
					Money::from_minor( $minor, $currency ),
					$currency,
					$service_id,
					self::failure( $answer )
				)
			);
			/* translators: %s: why the bank refused */
			return new \WP_Error( 'servicepay_refund', sprintf( __( 'The payer\'s bank refused the refund (%s): no money went back.', 'servicepay-woocommerce' ), self::failure( $answer ) ) );
		}
		$order->add_order_note(
			sprintf(
				/* translators: 1: amount, 2: currency, 3: refund id, 4: WooCommerce refund id, 5: status */
				__( 'ServicePay refund %3$s of %1$s %2$s requested (WooCommerce refund #%4$d): %5$s.', 'servicepay-woocommerce' ),
				Money::from_minor( $minor, $currency ),
				$currency,
				$service_id,
				$refund_id,
				'succeeded' === ( $answer['status'] ?? '' ) ? __( 'sent back to the payer\'s account', 'servicepay-woocommerce' ) : __( 'waiting for the bank', 'servicepay-woocommerce' )
			)
		);
		return true;
	}

	/**
	 * The bank's answer to a refund, by webhook (`refund.succeeded`, `refund.failed`): one note per refund,
	 * however often the event comes; a refused refund also puts the order on hold.
	 *
	 * @param \WC_Order           $order Order.
	 * @param array<string,mixed> $event The verified event.
	 * @return string `noted` or `ignored`.
	 */
	public static function on_event( \WC_Order $order, array $event ): string {
		$refund = is_array( $event['data']['refund'] ?? null ) ? $event['data']['refund'] : array();
		$id     = (string) ( $refund['id'] ?? '' );
		if ( '' === $id || ! SettlementClaim::take( 'refund-answer:' . $id, $order->get_id() ) ) {
			return Settlement::IGNORED;
		}
		$currency = (string) ( $refund['currency'] ?? $order->get_currency() );
		$amount   = Money::from_minor( (int) ( $refund['amount'] ?? 0 ), $currency );
		if ( null === self::woocommerce_refund( $order, $id ) ) {
			// Refused at once: WooCommerce deleted its refund, and the order's note said so when it was asked.
			return Settlement::IGNORED;
		}
		if ( 'refund.succeeded' === ( $event['type'] ?? '' ) ) {
			$order->add_order_note(
				/* translators: 1: amount, 2: currency, 3: refund id */
				sprintf( __( 'The bank sent %1$s %2$s back to the payer\'s account (ServicePay refund %3$s).', 'servicepay-woocommerce' ), $amount, $currency, $id )
			);
			return Settlement::NOTED;
		}
		$order->update_status(
			'on-hold',
			sprintf(
				/* translators: 1: amount, 2: currency, 3: refund id, 4: why the bank refused */
				__( 'The payer\'s bank refused ServicePay refund %3$s of %1$s %2$s (%4$s): the payer has NOT had the money back, although WooCommerce recorded the refund. Contact the payer and refund them another way.', 'servicepay-woocommerce' ),
				$amount,
				$currency,
				$id,
				self::failure( $refund )
			)
		);
		Logger::error( 'refund refused by the bank', array( 'orderId' => $order->get_id(), 'refundId' => $id ) );
		return Settlement::NOTED;
	}

	/**
	 * WooCommerce's refund of the order that carries the service's refund id, if it still exists.
	 *
	 * @param \WC_Order $order Order.
	 * @param string    $id    The service's refund id.
	 */
	private static function woocommerce_refund( \WC_Order $order, string $id ): ?\WC_Order_Refund {
		foreach ( $order->get_refunds() as $refund ) {
			if ( $refund->get_meta( self::REFUND_ID ) === $id ) {
				return $refund;
			}
		}
		return null;
	}

	/**
	 * Why a refund failed, in words.
	 *
	 * @param array<string,mixed> $refund The service's refund.
	 */
	private static function failure( array $refund ): string {
		return 'payer_account_closed' === ( $refund['failureReason'] ?? '' )
			? __( 'the payer\'s account is closed', 'servicepay-woocommerce' )
			: (string) ( $refund['failureReason'] ?? __( 'refused', 'servicepay-woocommerce' ) );
	}

	/**
	 * The client for the order's environment (the key its session was made with).
	 *
	 * @param \WC_Order $order Order.
	 */
	private static function client( \WC_Order $order ): ApiClient {
		$settings    = Settings::load();
		$environment = (string) $order->get_meta( OrderSessions::ENVIRONMENT );
		return new ApiClient( $settings->api_url(), $settings->get( ( 'live' === $environment ? 'live' : 'test' ) . '_secret_key' ) );
	}
}
