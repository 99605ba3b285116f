<?php
/**
 * What a session's state does to its order.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Orders;

use ServicePay\WooCommerce\Logger;
use ServicePay\WooCommerce\Money;

defined( 'ABSPATH' ) || exit;

/**
 * The one place that changes an order because of ServicePay. Webhooks, the return from the widget, the
 * scheduled check and the unpaid-order timer all come here with the session as the service describes it, in
 * any order and any number of times; claims make each effect happen once.
 */
final class Settlement {

	/** The session is paid and this call settled the order. */
	public const SETTLED = 'settled';
	/**
	 * The order was settled before (by another delivery, the return, or the check), or another request holds the
	 * session's claim and had not stored the paid order when this one stopped waiting (see awaits_payment()).
	 */
	public const ALREADY_PAID = 'already_paid';
	/** The session's amount or currency is not the order's: not settled, the order is on hold. */
	public const AMOUNT_MISMATCH = 'amount_mismatch';
	/** The session is still open. */
	public const OPEN = 'open';
	/** A note was added (mismatch, expired, cancelled). */
	public const NOTED = 'noted';
	/** Nothing to do (an old session, an event seen before). */
	public const IGNORED = 'ignored';

	/**
	 * Applies a session to its order.
	 *
	 * @param \WC_Order           $order    Order (read again here: callers may hold a stale copy).
	 * @param array<string,mixed> $session  The service's session object.
	 * @param string              $event_id The webhook event id, '' for the return or the check.
	 * @return string One of the constants above.
	 * @throws \RuntimeException When the status the session calls for (paid, on hold, failed) could not be stored,
	 *                           here or, twice running, by another request this one waited for (the webhook
	 *                           answers 500, so it comes again).
	 */
	public static function apply( \WC_Order $order, array $session, string $event_id = '' ): string {
		$order      = StoredOrder::read( $order->get_id() );
		$session_id = (string) ( $session['id'] ?? '' );
		if ( ! $order instanceof \WC_Order || ! OrderSessions::owns( $order, $session_id ) ) {
			Logger::warning( 'session does not belong to the order', array( 'sessionId' => $session_id ) );
			return self::IGNORED;
		}
		switch ( (string) ( $session['status'] ?? '' ) ) {
			case 'successful':
				return self::settle( $order, $session );
			case 'mismatch':
				return self::on_mismatch( $order, $session, $event_id );
			case 'expired':
				return self::on_end( $order, $session, 'expired' );
			case 'cancelled':
				return self::on_end( $order, $session, 'cancelled' );
			default:
				return self::OPEN;
		}
	}

	/**
	 * Settles once: amount and currency checked, then the claim, then payment_complete.
	 *
	 * @param \WC_Order           $order   Order.
	 * @param array<string,mixed> $session Session.
	 * @param bool                $retried Whether this is the one retry after another request gave the claim up.
	 */
	private static function settle( \WC_Order $order, array $session, bool $retried = false ): string {
		$session_id = (string) $session['id'];
		$reference  = (string) ( $session['reference'] ?? '' );
		$currency   = $order->get_currency();
		$expected   = Money::to_minor( (string) $order->get_total( 'edit' ), $currency );
		$paid       = (int) ( $session['amount'] ?? -1 );
		$paid_in    = strtoupper( (string) ( $session['currency'] ?? '' ) );

		// This payment settled the order before: a replay (the portal's "Resend", the bank's redelivery), however
		// late and whatever the order's status now (the shop may have set it back to on hold or pending).
		if ( PaymentRecord::settled( $session_id ) ) {
			return self::settled_before( $order, $session_id );
		}
		if ( $paid !== $expected || $paid_in !== $currency ) {
			$hold_claim = 'amount-mismatch:' . $session_id;
			if ( SettlementClaim::take( $hold_claim, $order->get_id() ) ) {
				$note = sprintf(
					/* translators: 1: session id, 2: reference, 3: amount paid, 4: its currency, 5: order total, 6: order currency */
					__( 'ServicePay session %1$s (reference %2$s) was paid %3$s %4$s, but this order is %5$s %6$s. The order was not marked paid: check the amounts and refund or complete it by hand.', 'servicepay-woocommerce' ),
					$session_id,
					$reference,
					Money::from_minor( $paid, $paid_in ),
					$paid_in,
					Money::from_minor( $expected, $currency ),
					$currency
				);
				Logger::error(
					'paid session does not match the order total',
					array(
						'orderId'       => $order->get_id(),
						'sessionId'     => $session_id,
						'paid'          => $paid,
						'paidCurrency'  => $paid_in,
						'orderTotal'    => $expected,
						'orderCurrency' => $currency,
					)
				);
				// An order on hold already (the shop held it, or another of its sessions was paid another amount)
				// changes no status, so WooCommerce would write no note: the shop owner gets this one all the same.
				$held = $order->has_status( 'on-hold' )
					? StatusChange::note_once( $order, $hold_claim, $note )
					: StatusChange::once( $order, $hold_claim, 'on-hold', static fn () => $order->update_status( 'on-hold', $note ) );
				if ( ! $held ) {
					// Left pending, the order could be paid again; held without its note, the owner does not know why:
					// the next delivery or the check does it again.
					SettlementClaim::release( $hold_claim );
					throw new \RuntimeException( 'The order could not be put on hold; it will be retried.' );
				}
			} elseif ( self::await_other_request( $order, $hold_claim, $order->has_status( 'on-hold' ) ? 'announced:' . $hold_claim : '' ) ) {
				return self::settle_again( $order, $session, $retried );
			}
			return self::AMOUNT_MISMATCH;
		}

		// Two claims: one per session (a replay, a concurrent delivery or the return racing the webhook lose
		// here, silently), then one per order (a second session paying an order already paid loses here, and
		// the shop owner is told to refund it).
		// A claim whose holder died before settling (the order is still unpaid two minutes later) is taken over,
		// so a crash between claim and payment_complete cannot leave a paid order pending for ever.
		$payable       = self::payable( $order );
		$session_claim = 'session-paid:' . $session_id;
		if ( ! SettlementClaim::take( $session_claim, $order->get_id() )
			&& ! ( $payable && SettlementClaim::take_over_stale( $session_claim, $order->get_id() ) ) ) {
			if ( $payable && self::await_other_request( $order, $session_claim ) ) {
				return self::settle_again( $order, $session, $retried );
			}
			return self::ALREADY_PAID;
		}
		if ( PaymentRecord::settled( $session_id ) ) {
			// A holder slower than the take-over's two minutes stored the payment after this request looked.
			return self::settled_before( $order, $session_id );
		}
		$claim = 'paid:' . $order->get_id();
		if ( ! $payable || ( ! SettlementClaim::take( $claim, $order->get_id() ) && ! SettlementClaim::take_over_stale( $claim, $order->get_id() ) ) ) {
			$order->add_order_note(
				sprintf(
					/* translators: 1: session id, 2: reference */
					__( 'A second ServicePay payment arrived for this already paid order: session %1$s, reference %2$s. Refund it to the payer.', 'servicepay-woocommerce' ),
					$session_id,
					$reference
				)
			);
			Logger::warning( 'second payment for a paid order', array( 'orderId' => $order->get_id(), 'sessionId' => $session_id ) );
			return self::ALREADY_PAID;
		}

		$before = $order->get_status();
		try {
			$order->update_meta_data( OrderSessions::SESSION_ID, $session_id );
			$order->update_meta_data( OrderSessions::REFERENCE, $reference );
			// What payment_complete() sets besides the status, set beforehand (it keeps them): a request that stores
			// the paid status alone, after another one ran its transition (see StatusChange), writes them with it.
			$order->set_transaction_id( $session_id );
			if ( ! $order->get_date_paid( 'edit' ) ) {
				$order->set_date_paid( time() );
			}
			$note      = sprintf(
				/* translators: 1: amount, 2: currency, 3: session id, 4: reference */
				__( 'ServicePay payment of %1$s %2$s received by bank transfer. Session: %3$s. Reference: %4$s.', 'servicepay-woocommerce' ),
				Money::from_minor( $paid, $currency ),
				$currency,
				$session_id,
				$reference
			);
			$paid_as   = apply_filters( 'woocommerce_payment_complete_order_status', $order->needs_processing() ? 'processing' : 'completed', $order->get_id(), $order );
			$completed = StatusChange::once( $order, $session_claim, $paid_as, static fn () => $order->payment_complete( $session_id ), $note );
		} catch ( \Throwable $error ) {
			$completed = false;
			Logger::error( 'payment_complete threw', array( 'orderId' => $order->get_id(), 'error' => $error->getMessage() ) );
		}
		if ( ! $completed ) {
			$fresh = StoredOrder::read( $order->get_id() );
			if ( $fresh instanceof \WC_Order && $fresh->has_status( $before ) ) {
				// The database still holds the order unpaid: give the claims back so the next delivery or the check
				// settles it (storing the status alone if WooCommerce's status change ran here: see StatusChange).
				SettlementClaim::release( $claim );
				SettlementClaim::release( $session_claim );
				throw new \RuntimeException( 'The order could not be marked paid; it will be retried.' );
			}
		}
		PaymentRecord::keep( $order->get_id(), $session_id );
		Logger::info( 'order paid', array( 'orderId' => $order->get_id(), 'sessionId' => $session_id ) );
		return self::SETTLED;
	}

	/**
	 * The session's payment settled the order before: nothing to do, and nothing for the shop owner to see (no
	 * note, no stock change, no mail); a log line says the delivery was ignored.
	 *
	 * @param \WC_Order $order      Order.
	 * @param string    $session_id Session.
	 */
	private static function settled_before( \WC_Order $order, string $session_id ): string {
		Logger::info( 'payment settled before; nothing to do', array( 'orderId' => $order->get_id(), 'sessionId' => $session_id, 'status' => $order->get_status() ) );
		return self::ALREADY_PAID;
	}

	/**
	 * Another request took `$claim` a moment ago and is settling the order right now (the webhook and the payer's
	 * return arrive together): waits, at most two seconds, until the order has left the status this request read,
	 * so that what this request answers (the return's `orderStatus`) is the settled order, not the moment before.
	 * A claim older than that is a holder long done (or dead, and taken over later): no wait.
	 * A holder that failed gives its claim back and leaves the order as it was; answering "already paid" (or "on
	 * hold") then would be false, and a webhook answered 200 is not delivered again. So the wait ends as soon as
	 * the claim is gone with the order unchanged (even before it began), and says so: the caller settles again.
	 *
	 * An order on hold already keeps its status when a payment of another amount holds it: the holder is done once
	 * it recorded its note (`$done`).
	 *
	 * @param \WC_Order $order The order as this request read it.
	 * @param string    $claim The claim the other request holds.
	 * @param string    $done  A claim the holder takes once done when the order keeps its status; '' for none.
	 * @return bool Whether the holder gave the claim up and the order is still in the status this request read.
	 */
	private static function await_other_request( \WC_Order $order, string $claim, string $done = '' ): bool {
		$before   = $order->get_status();
		$deadline = microtime( true ) + ( SettlementClaim::recent( $claim, 5 ) ? 2.0 : 0.0 );
		while ( true ) {
			$stored = StoredOrder::read( $order->get_id() );
			if ( ! $stored instanceof \WC_Order || ! $stored->has_status( $before ) || ( '' !== $done && SettlementClaim::exists( $done ) ) ) {
				return false;
			}
			// Read after the order: a holder gives its claims back only once the database holds the order unchanged.
			if ( ! SettlementClaim::exists( $claim ) ) {
				return true;
			}
			if ( microtime( true ) >= $deadline ) {
				return false;
			}
			usleep( 50000 );
		}
	}

	/**
	 * The holder of the claim gave it up and the order is as it was: this request settles it itself, taking the
	 * claims again (so still exactly once, whoever wins them). Once only: if that holder gives up too, the answer
	 * is the holder's own, a retryable failure (the webhook answers 500 and comes again; the return and the
	 * check carry on as if the service could not be asked).
	 *
	 * @param \WC_Order           $order   Order.
	 * @param array<string,mixed> $session Session.
	 * @param bool                $retried Whether this request settled again already.
	 * @throws \RuntimeException On the second give-up, or when the order is gone.
	 */
	private static function settle_again( \WC_Order $order, array $session, bool $retried ): string {
		$fresh = StoredOrder::read( $order->get_id() );
		if ( $retried || ! $fresh instanceof \WC_Order ) {
			throw new \RuntimeException( 'Another request gave the settlement up; it will be retried.' );
		}
		Logger::info( 'another request gave the settlement up; settling again', array( 'orderId' => $order->get_id(), 'sessionId' => (string) $session['id'] ) );
		return self::settle( $fresh, $session, true );
	}

	/**
	 * Whether the order, as the database holds it now, still waits for a payment: a status payment_complete()
	 * accepts, and no settlement of the plugin's ever stored it paid (`stored:paid:<order>`). apply() answers
	 * `already_paid` for such an order when another request held the session's claim for longer than its 2 s wait
	 * (or died holding it): that request may still fail and give the claim back, so the webhook asks to be
	 * delivered again rather than answer 200, and the scheduled check comes back. Neither the date paid nor the
	 * transaction id counts as paid: a save whose status the database lost can keep either (under HPOS the date
	 * paid is in another table than the status; on posts storage the transaction id is meta), and the id can be
	 * typed into the order screen. The status (read past the caches) and the record cannot tell another story.
	 *
	 * @param int $order_id Order id.
	 */
	public static function awaits_payment( int $order_id ): bool {
		$order = StoredOrder::read( $order_id );
		return $order instanceof \WC_Order
			&& self::payable( $order )
			&& ! PaymentRecord::order_paid( $order_id );
	}

	/**
	 * Whether payment_complete() would mark the order paid (WooCommerce's own list, filterable).
	 *
	 * @param \WC_Order $order Order.
	 */
	private static function payable( \WC_Order $order ): bool {
		return $order->has_status( apply_filters( 'woocommerce_valid_order_statuses_for_payment_complete', array( 'on-hold', 'pending', 'failed', 'cancelled' ), $order ) );
	}

	/**
	 * A transfer of another amount was returned by the bank; the session still takes the exact amount.
	 *
	 * @param \WC_Order           $order    Order.
	 * @param array<string,mixed> $session  Session.
	 * @param string              $event_id Event id ('' when not from a webhook).
	 */
	private static function on_mismatch( \WC_Order $order, array $session, string $event_id ): string {
		$last     = is_array( $session['lastMismatch'] ?? null ) ? $session['lastMismatch'] : array();
		$currency = (string) ( $session['currency'] ?? $order->get_currency() );
		$key      = 'mismatch:' . ( '' !== $event_id ? $event_id : $session['id'] . ':' . ( $session['updatedAt'] ?? '' ) );
		if ( ! $order->needs_payment() || ! SettlementClaim::take( $key, $order->get_id() ) ) {
			return self::IGNORED;
		}
		$order->add_order_note(
			sprintf(
				/* translators: 1: amount received, 2: amount expected, 3: currency, 4: session id */
				__( 'A bank transfer of %1$s %3$s arrived, but %2$s %3$s is due (ServicePay session %4$s). The bank returned it to the payer; the order stays pending until the exact amount arrives.', 'servicepay-woocommerce' ),
				Money::from_minor( (int) ( $last['receivedAmount'] ?? 0 ), $currency ),
				Money::from_minor( (int) ( $last['expectedAmount'] ?? $session['amount'] ?? 0 ), $currency ),
				$currency,
				(string) $session['id']
			)
		);
		return self::NOTED;
	}

	/**
	 * The session ended unpaid. Expired: the order fails (the payer can pay it again from their account).
	 * Cancelled by the payer: it stays pending, so the checkout can be tried again.
	 *
	 * @param \WC_Order           $order   Order.
	 * @param array<string,mixed> $session Session.
	 * @param string              $status  `expired` or `cancelled`.
	 */
	private static function on_end( \WC_Order $order, array $session, string $status ): string {
		$session_id = (string) $session['id'];
		// An earlier attempt's session ends when a new one replaces it; only the current one speaks for the order.
		if ( OrderSessions::current( $order ) !== $session_id || ! $order->needs_payment() ) {
			return self::IGNORED;
		}
		$claim = 'ended:' . $session_id;
		if ( ! SettlementClaim::take( $claim, $order->get_id() ) ) {
			return self::IGNORED;
		}
		if ( 'expired' === $status ) {
			$note = sprintf(
				/* translators: %s: session id */
				__( 'ServicePay session %s expired before the transfer arrived. The customer can pay again from their account.', 'servicepay-woocommerce' ),
				$session_id
			);
			if ( ! StatusChange::once( $order, $claim, 'failed', static fn () => $order->update_status( 'failed', $note ) ) ) {
				SettlementClaim::release( $claim );
				throw new \RuntimeException( 'The order could not be marked failed; it will be retried.' );
			}
		} else {
			$order->add_order_note(
				sprintf(
					/* translators: %s: session id */
					__( 'The payer cancelled the ServicePay payment (session %s). The order stays pending payment so it can be paid again.', 'servicepay-woocommerce' ),
					$session_id
				)
			);
		}
		return self::NOTED;
	}
}
