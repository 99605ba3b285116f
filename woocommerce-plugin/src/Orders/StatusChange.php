<?php
/**
 * A status change whose notes and mails reach the order once, however many requests make it.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Orders;

use ServicePay\WooCommerce\Logger;

defined( 'ABSPATH' ) || exit;

/**
 * WooCommerce runs a status change's transition (its note, the customer's and the shop's mails, the stock change,
 * other plugins' hooks) even when the database lost the status it saved. The request that made the change then
 * gives its claim back and a later one (the request that waited for it, the webhook's redelivery, the scheduled
 * check) makes the change again: that later request must store the status without running the transition a
 * second time. So the first transition for a cause is recorded as the claim `announced:<cause>` (never given
 * back), and a request that finds it stores the status alone.
 */
final class StatusChange {

	/**
	 * Changes the order's status once for `$cause`, with WooCommerce's transition (and `$note`) only if no earlier
	 * request ran it for that cause.
	 *
	 * @param \WC_Order $order  The order as this request read it, with what the change sets besides the status
	 *                          (for a payment: the transaction id, date paid and session meta) already set.
	 * @param string    $cause  The claim this request holds for the change (`session-paid:<session>`,
	 *                          `amount-mismatch:<session>`, `ended:<session>`).
	 * @param string    $to     The status the change sets.
	 * @param callable  $change Makes the change through WooCommerce (payment_complete(), update_status()), which
	 *                          runs the transition; returns false when WooCommerce reports a failure.
	 * @param string    $note   A note of the plugin's own, written as the transition starts; '' for none.
	 * @return bool Whether the database no longer holds the status the order had (see StoredOrder::kept_status()).
	 */
	public static function once( \WC_Order $order, string $cause, string $to, callable $change, string $note = '' ): bool {
		$before    = $order->get_status();
		$announced = 'announced:' . $cause;
		if ( SettlementClaim::exists( $announced ) ) {
			Logger::warning( 'an earlier request ran this status change but did not store it; storing it alone', array( 'orderId' => $order->get_id(), 'cause' => $cause ) );
			$order->save_meta_data();
			$order->set_status( $to );
			return StoredOrder::kept_status( $order, $before );
		}
		$id       = $order->get_id();
		$fired    = false;
		$listener = static function ( $order_id, $changing = null ) use ( $id, $announced, $note, &$fired ): void {
			if ( $fired || (int) $order_id !== $id ) {
				return;
			}
			$fired = true;
			try {
				$first = SettlementClaim::take( $announced, $id );
			} catch ( \RuntimeException $error ) {
				// Unrecorded, a retry runs the transition again (its note and mail twice): the lesser harm next to
				// stopping this one, which WooCommerce would read as an error of the transition.
				Logger::error( 'could not record the status change', array( 'orderId' => $id, 'error' => $error->getMessage() ) );
				$first = true;
			}
			if ( $first && '' !== $note && $changing instanceof \WC_Order ) {
				$changing->add_order_note( $note );
			}
		};
		// The first thing WooCommerce's transition does, before its note, mails and stock change (priority 10).
		add_action( 'woocommerce_order_status_' . $to, $listener, 1, 2 );
		try {
			$changed = (bool) $change();
		} finally {
			remove_action( 'woocommerce_order_status_' . $to, $listener, 1 );
		}
		return $changed && StoredOrder::kept_status( $order, $before );
	}

	/**
	 * The order has the status `$cause` calls for already (a payment of another amount for an order on hold):
	 * WooCommerce runs no transition for an unchanged status, so the note that would have come with it is
	 * written here, once for that cause, and recorded under the same `announced:<cause>` claim (an earlier request
	 * that ran the transition for it, its status since lost, wrote the note already). Only the holder of `$cause`
	 * comes here, so nobody else writes that record meanwhile; it is taken once the note is written, which is
	 * what a request waiting for the holder looks for (Settlement::await_other_request()).
	 *
	 * @param \WC_Order $order The order as this request read it.
	 * @param string    $cause The claim this request holds for the change (`amount-mismatch:<session>`).
	 * @param string    $note  The note the change carries.
	 * @return bool Whether the note is on the order (false: not written, the caller gives its claim back).
	 */
	public static function note_once( \WC_Order $order, string $cause, string $note ): bool {
		$announced = 'announced:' . $cause;
		if ( SettlementClaim::exists( $announced ) ) {
			return true;
		}
		if ( ! $order->add_order_note( $note ) ) {
			Logger::error( 'the note was not stored', array( 'orderId' => $order->get_id(), 'cause' => $cause ) );
			return false;
		}
		try {
			SettlementClaim::take( $announced, $order->get_id() );
		} catch ( \RuntimeException $error ) {
			// The note is written and the cause's claim kept, so no retry writes it again; only a waiting request
			// (which then waits its 2 s) misses the record.
			Logger::error( 'could not record the note', array( 'orderId' => $order->get_id(), 'error' => $error->getMessage() ) );
		}
		return true;
	}
}
