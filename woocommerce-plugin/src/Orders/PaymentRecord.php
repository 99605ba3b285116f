<?php
/**
 * The plugin's own record of the payments it stored.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Orders;

use ServicePay\WooCommerce\Logger;

defined( 'ABSPATH' ) || exit;

/**
 * Once a settlement has read the paid status back from the database, two claims are taken and never given back:
 * `settled:<session>` (this payment settled its order: it never settles anything again, whatever the order's
 * status later and however late a replay comes) and `stored:paid:<order>` (the order was paid once: what
 * Settlement::awaits_payment() decides on). The claims that guard the settling itself (`session-paid:<session>`,
 * `paid:<order>`) can be taken over after two minutes, so that a request that died mid-way cannot leave a paid
 * order pending; these records cannot, so that taking over never settles a payment a second time.
 */
final class PaymentRecord {

	private const SESSION = 'settled:';
	private const ORDER   = 'stored:paid:';

	/**
	 * Records that the session's payment is stored on the order. A record the database refuses is logged: the
	 * order is paid as stored, and only a shop owner moving it back to an unpaid status before a late replay of
	 * that payment (more than two minutes on) would then see it settled again.
	 *
	 * @param int    $order_id   Order id.
	 * @param string $session_id The session whose payment it is.
	 */
	public static function keep( int $order_id, string $session_id ): void {
		foreach ( array( self::SESSION . $session_id, self::ORDER . $order_id ) as $key ) {
			try {
				SettlementClaim::take( $key, $order_id );
			} catch ( \RuntimeException $error ) {
				Logger::error( 'could not record the stored payment', array( 'orderId' => $order_id, 'sessionId' => $session_id, 'error' => $error->getMessage() ) );
			}
		}
	}

	/**
	 * Whether the session's payment settled an order already (then it has nothing more to do, ever).
	 *
	 * @param string $session_id Session id.
	 */
	public static function settled( string $session_id ): bool {
		return SettlementClaim::exists( self::SESSION . $session_id );
	}

	/**
	 * Whether a payment was ever stored on the order by the plugin (with this record: orders settled before it
	 * existed have none).
	 *
	 * @param int $order_id Order id.
	 */
	public static function order_paid( int $order_id ): bool {
		return SettlementClaim::exists( self::ORDER . $order_id );
	}
}
