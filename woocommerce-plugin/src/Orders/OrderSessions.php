<?php
/**
 * What an order remembers of its ServicePay sessions.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Orders;

defined( 'ABSPATH' ) || exit;

/**
 * Order meta (through the order object, so it works with HPOS and with the posts table): the current session
 * id, its reference, environment and end, the attempt number, and every session id the order ever had.
 */
final class OrderSessions {

	public const SESSION_ID  = '_servicepay_session_id';
	public const REFERENCE   = '_servicepay_reference';
	public const ENVIRONMENT = '_servicepay_environment';
	public const EXPIRES_AT  = '_servicepay_expires_at';
	public const ATTEMPT     = '_servicepay_attempt';
	public const ALL         = '_servicepay_sessions';

	/**
	 * The current session id ('' when none).
	 *
	 * @param \WC_Order $order Order.
	 */
	public static function current( \WC_Order $order ): string {
		return (string) $order->get_meta( self::SESSION_ID );
	}

	/**
	 * Every session id the order had, oldest first.
	 *
	 * @param \WC_Order $order Order.
	 * @return string[]
	 */
	public static function all( \WC_Order $order ): array {
		$list = array_filter( explode( ',', (string) $order->get_meta( self::ALL ) ) );
		return array_values( $list );
	}

	/**
	 * Whether the session belongs to this order (current or an earlier attempt).
	 *
	 * @param \WC_Order $order      Order.
	 * @param string    $session_id Session id.
	 */
	public static function owns( \WC_Order $order, string $session_id ): bool {
		return '' !== $session_id && in_array( $session_id, self::all( $order ), true );
	}

	/**
	 * Records a new session as the current one (the caller saves the order).
	 *
	 * @param \WC_Order           $order   Order.
	 * @param array<string,mixed> $session The service's session.
	 * @param int                 $attempt Attempt number.
	 */
	public static function remember( \WC_Order $order, array $session, int $attempt ): void {
		$all   = self::all( $order );
		$all[] = (string) $session['id'];
		$order->update_meta_data( self::SESSION_ID, (string) $session['id'] );
		$order->update_meta_data( self::REFERENCE, (string) ( $session['reference'] ?? '' ) );
		$order->update_meta_data( self::ENVIRONMENT, (string) ( $session['environment'] ?? '' ) );
		$order->update_meta_data( self::EXPIRES_AT, (string) ( $session['expiresAt'] ?? '' ) );
		$order->update_meta_data( self::ATTEMPT, (string) $attempt );
		$order->update_meta_data( self::ALL, implode( ',', array_unique( $all ) ) );
	}

	/**
	 * The session's end as unix seconds (0 when unknown).
	 *
	 * @param \WC_Order $order Order.
	 */
	public static function expires_at( \WC_Order $order ): int {
		$value = (string) $order->get_meta( self::EXPIRES_AT );
		$time  = '' === $value ? false : strtotime( $value );
		return false === $time ? 0 : $time;
	}

	/**
	 * Orders using this gateway.
	 *
	 * @param \WC_Order $order Order.
	 */
	public static function is_ours( \WC_Order $order ): bool {
		return 'servicepay' === $order->get_payment_method();
	}
}
