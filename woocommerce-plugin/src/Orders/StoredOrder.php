<?php
/**
 * An order as the database holds it, and whether a status written to it stayed.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Orders;

use ServicePay\WooCommerce\Logger;

defined( 'ABSPATH' ) || exit;

/**
 * Settlement decides what a session does to an order; this reads the order past WooCommerce's caches and makes
 * sure a status change reached the database, because WooCommerce does not notice when it did not.
 */
final class StoredOrder {

	/**
	 * The order as the database holds it now, not as this request first read it: WooCommerce keeps the orders
	 * a request reads in a cache for the rest of it, and another request may have changed the order meanwhile.
	 *
	 * @param int $order_id Order id.
	 * @return \WC_Order|null
	 */
	public static function read( int $order_id ): ?\WC_Order {
		if ( class_exists( \Automattic\WooCommerce\Caches\OrderCache::class ) && function_exists( 'wc_get_container' ) ) {
			wc_get_container()->get( \Automattic\WooCommerce\Caches\OrderCache::class )->remove( $order_id );
		}
		clean_post_cache( $order_id );
		$order = wc_get_order( $order_id );
		return $order instanceof \WC_Order ? $order : null;
	}

	/**
	 * Whether the status this request gave the order reached the database, writing it once more when it did not.
	 *
	 * WooCommerce saves the order row with an upsert whose failure it reads as "0 rows changed" and goes on: the
	 * status change's notes, mails and stock change then follow for an order the database still holds in its old
	 * status. SQLite does this when another request holds the write lock; a MySQL deadlock can too. So the order
	 * is read back, and a lost status is written again through the data store alone: WC_Order::save() would run
	 * the transition (and send its mails) a second time. The status counts as stored once the database no longer
	 * holds the old one (another request may have moved the order on since, e.g. from processing to completed).
	 *
	 * @param \WC_Order $changed The order as this request changed it (payment_complete() also set its
	 *                           transaction id and date paid; for other changes those are as stored).
	 * @param string    $before  Its status before the change.
	 */
	public static function kept_status( \WC_Order $changed, string $before ): bool {
		if ( $changed->has_status( $before ) ) {
			return true; // Nothing changed, nothing to lose.
		}
		$stored = self::read( $changed->get_id() );
		if ( ! $stored instanceof \WC_Order ) {
			return false;
		}
		if ( ! $stored->has_status( $before ) ) {
			return true;
		}
		Logger::error(
			'the order status was not stored; writing it again',
			array(
				'orderId' => $changed->get_id(),
				'status'  => $stored->get_status(),
				'wanted'  => $changed->get_status( 'edit' ),
			)
		);
		$stored->set_transaction_id( $changed->get_transaction_id( 'edit' ) );
		$stored->set_date_paid( $changed->get_date_paid( 'edit' ) );
		$stored->set_status( $changed->get_status( 'edit' ) );
		$stored->get_data_store()->update( $stored );
		$again = self::read( $changed->get_id() );
		return $again instanceof \WC_Order && ! $again->has_status( $before );
	}
}
