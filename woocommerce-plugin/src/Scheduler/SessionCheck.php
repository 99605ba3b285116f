<?php
/**
 * The scheduled check that settles an order even when every webhook was missed.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Scheduler;

use ServicePay\WooCommerce\Checkout\SessionConfirmer;
use ServicePay\WooCommerce\Orders\OrderSessions;
use ServicePay\WooCommerce\Orders\Settlement;

defined( 'ABSPATH' ) || exit;

/**
 * An Action Scheduler action per open order: five minutes after its session opens, then every ten minutes
 * while the session is open, and once more after the session's end. Webhooks stay the fast path; this is the
 * net under them.
 */
final class SessionCheck {

	public const HOOK  = 'servicepay_check_order';
	public const GROUP = 'servicepay';

	/** Registers the action's handler. */
	public static function register(): void {
		add_action( self::HOOK, array( self::class, 'run' ) );
	}

	/**
	 * Schedules the next check for the order, unless one is already waiting.
	 *
	 * @param int $order_id Order id.
	 * @param int $delay    Seconds from now.
	 */
	public static function schedule( int $order_id, int $delay = 300 ): void {
		if ( ! function_exists( 'as_schedule_single_action' ) ) {
			return;
		}
		$args = array( 'order_id' => $order_id );
		if ( as_has_scheduled_action( self::HOOK, $args, self::GROUP ) ) {
			return;
		}
		as_schedule_single_action( time() + $delay, self::HOOK, $args, self::GROUP );
	}

	/**
	 * Cancels every pending check (uninstall). By the hook alone: `as_unschedule_all_actions` with an arguments
	 * array matches only actions scheduled with exactly those arguments, and each check names its order. Without
	 * Action Scheduler loaded (WooCommerce inactive), its table is updated directly, as its store would.
	 */
	public static function cancel_all(): void {
		if ( function_exists( 'as_unschedule_all_actions' ) && class_exists( \ActionScheduler::class ) && \ActionScheduler::is_initialized() ) {
			as_unschedule_all_actions( self::HOOK );
			return;
		}
		global $wpdb;
		$table = $wpdb->prefix . 'actionscheduler_actions';
		if ( $wpdb->get_var( $wpdb->prepare( 'SHOW TABLES LIKE %s', $table ) ) !== $table ) {
			return;
		}
		// phpcs:ignore WordPress.DB.DirectDatabaseQuery,WordPress.DB.PreparedSQL.InterpolatedNotPrepared
		$wpdb->query( $wpdb->prepare( "UPDATE {$table} SET status = 'canceled' WHERE hook = %s AND status = 'pending'", self::HOOK ) );
	}

	/**
	 * The action: ask the service, settle, and come back later while the session is open.
	 *
	 * @param int $order_id Order id.
	 */
	public static function run( $order_id ): void {
		$order = wc_get_order( (int) $order_id );
		if ( ! $order instanceof \WC_Order || ! $order->needs_payment() ) {
			return;
		}
		$status = SessionConfirmer::confirm( $order );
		// A paid session whose order is still unpaid: another request held its claim longer than the settlement
		// waits and may yet fail, so look again rather than stop with the order pending.
		$unpaid = 'successful' === $status && Settlement::awaits_payment( $order->get_id() );
		if ( $unpaid || in_array( $status, array( 'pending', 'awaiting_payment', 'mismatch', '' ), true ) ) {
			$ends = OrderSessions::expires_at( $order );
			// Once past the session's end (plus a margin for the service's sweeper), stop asking.
			if ( 0 === $ends || time() < $ends + 900 ) {
				// Straight to the scheduler: this action counts as "running", so schedule() would see it and wait.
				as_schedule_single_action( time() + 600, self::HOOK, array( 'order_id' => $order->get_id() ), self::GROUP );
			}
		}
	}
}
