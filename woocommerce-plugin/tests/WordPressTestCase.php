<?php
/**
 * Base for tests that need the real WordPress + WooCommerce (group `wordpress`).
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests;

use PHPUnit\Framework\TestCase;

/**
 * Fails (never skips) when WordPress is not loaded: run with SERVICEPAY_WP_DIR, or exclude the group.
 */
abstract class WordPressTestCase extends TestCase {

	protected function setUp(): void {
		parent::setUp();
		if ( ! function_exists( 'wc_create_order' ) ) {
			$this->fail( 'Needs WordPress with WooCommerce: set SERVICEPAY_WP_DIR or use --exclude-group wordpress.' );
		}
	}

	/**
	 * A pending order of the gateway with one product line and a current session.
	 *
	 * @param string $total        Order total.
	 * @param string $session_id   The session the order has.
	 * @param string $currency     Currency.
	 * @param bool   $downloadable Whether the product is virtual and downloadable (WooCommerce then completes a
	 *                             paid order instead of processing it).
	 */
	protected function order_with_session( string $total, string $session_id, string $currency = 'USD', bool $downloadable = false ): \WC_Order {
		$product = new \WC_Product_Simple();
		$product->set_name( 'Claim test product' );
		$product->set_regular_price( $total );
		$product->set_virtual( $downloadable );
		$product->set_downloadable( $downloadable );
		$product->set_manage_stock( true );
		$product->set_stock_quantity( 5 );
		$product->save();
		$order = wc_create_order();
		$order->add_product( $product, 1 );
		$order->set_currency( $currency );
		$order->set_billing_email( 'payer@example.com' );
		$order->set_payment_method( 'servicepay' );
		$order->calculate_totals( false );
		$order->set_total( $total );
		\ServicePay\WooCommerce\Orders\OrderSessions::remember(
			$order,
			array(
				'id'          => $session_id,
				'reference'   => 'ref-' . $session_id,
				'environment' => 'test',
				'expiresAt'   => gmdate( 'c', time() + 3600 ),
			),
			1
		);
		$order->save();
		return $order;
	}

	/**
	 * The service's view of a session of the order.
	 *
	 * @param \WC_Order           $order  Order.
	 * @param string              $status Status.
	 * @param array<string,mixed> $extra  Overrides.
	 * @return array<string,mixed>
	 */
	protected function session_of( \WC_Order $order, string $status, array $extra = array() ): array {
		return array_merge(
			array(
				'id'          => $order->get_meta( '_servicepay_session_id' ),
				'reference'   => 'ref-' . $order->get_meta( '_servicepay_session_id' ),
				'status'      => $status,
				'environment' => 'test',
				'amount'      => \ServicePay\WooCommerce\Money::to_minor( (string) $order->get_total( 'edit' ), $order->get_currency() ),
				'currency'    => $order->get_currency(),
				'metadata'    => array( 'wc_order_id' => (string) $order->get_id() ),
			),
			$extra
		);
	}

	/**
	 * Makes the database drop the write of the order's new status, as SQLite does when another request holds
	 * the write lock (WooCommerce's upsert of the order row reads "0 rows" from the failure and goes on: its
	 * notes, mails and stock change follow as if the status were stored). Runs $apply, then stops dropping.
	 *
	 * @param string   $status The status whose writes are dropped (`processing`, `on-hold`, `failed`).
	 * @param int      $times  How many such writes to drop.
	 * @param callable $apply  What runs meanwhile.
	 * @return array{0:mixed,1:int} What $apply returned (or threw), and how many writes were dropped.
	 */
	protected function with_status_dropped( string $status, int $times, callable $apply ): array {
		global $wpdb;
		$dropped = 0;
		$drop    = static function ( $query ) use ( &$dropped, $status, $times, $wpdb ) {
			$order_row = '/^\s*(INSERT\s+INTO|UPDATE)\s+`?' . preg_quote( $wpdb->prefix, '/' ) . '(wc_orders|posts)\b/i';
			if ( $dropped < $times && is_string( $query ) && str_contains( $query, "'wc-" . $status . "'" ) && preg_match( $order_row, $query ) ) {
				++$dropped;
				return 'SELECT 1 FROM servicepay_test_dropped_statement';
			}
			return $query;
		};
		add_filter( 'query', $drop );
		$shown = $wpdb->suppress_errors( true );
		try {
			$result = $apply();
		} catch ( \Throwable $error ) {
			$result = $error;
		} finally {
			remove_filter( 'query', $drop );
			$wpdb->suppress_errors( $shown );
		}
		return array( $result, $dropped );
	}

	/**
	 * The stock of the order's (first) product, as the database holds it.
	 *
	 * @param \WC_Order $order Order.
	 */
	protected function stock_of( \WC_Order $order ): int {
		wp_cache_flush(); // Other processes changed it: read the database, not this process's cache.
		$items = $order->get_items();
		return (int) wc_get_product( reset( $items )->get_product_id() )->get_stock_quantity();
	}

	/**
	 * How many mails wp_mail() sent to an address (the test shop writes them to wp-content/mail.log).
	 *
	 * @param string $address Address.
	 */
	protected function emails_to( string $address ): int {
		$log = (string) @file_get_contents( WP_CONTENT_DIR . '/mail.log' );
		return substr_count( $log, '"to":"' . $address . '"' ) + substr_count( $log, '"to":["' . $address . '"]' );
	}

	/**
	 * Notes whose text contains a needle.
	 *
	 * @param int    $order_id Order.
	 * @param string $needle   Text.
	 */
	protected function notes_containing( int $order_id, string $needle ): int {
		$notes = wc_get_order_notes( array( 'order_id' => $order_id ) );
		return count( array_filter( $notes, static fn ( $n ) => str_contains( $n->content, $needle ) ) );
	}

	/**
	 * The mails sent about the order: to its payer, and to the shop with its number in the subject (the stack's
	 * mail.log, which every PHP process of the test shop writes). Subject => how many times it was sent.
	 *
	 * @param \WC_Order $order Order (its billing address is the payer's).
	 * @return array<string,int>
	 */
	protected function mails_about( \WC_Order $order ): array {
		$payer    = $order->get_billing_email();
		$subjects = array();
		foreach ( explode( "\n", (string) @file_get_contents( WP_CONTENT_DIR . '/mail.log' ) ) as $line ) {
			$mail = json_decode( $line, true );
			if ( ! is_array( $mail ) ) {
				continue;
			}
			$to = (array) $mail['to'];
			if ( in_array( $payer, $to, true ) || preg_match( '/#' . $order->get_id() . '\b/', (string) $mail['subject'] ) ) {
				$subjects[] = (string) $mail['subject'];
			}
		}
		return array_count_values( $subjects );
	}

	/**
	 * Each note on the order once: no two notes with the same text (WooCommerce's status change notes, the
	 * plugin's payment, hold and expiry notes, the stock notes), and each mail about it sent once.
	 *
	 * @param \WC_Order $order Order.
	 * @param int       $mails How many different mails were sent about it.
	 */
	protected function assert_each_note_and_mail_once( \WC_Order $order, int $mails ): void {
		$notes = array_map( static fn ( $note ) => $note->content, wc_get_order_notes( array( 'order_id' => $order->get_id() ) ) );
		$this->assertSame( array(), array_keys( array_filter( array_count_values( $notes ), static fn ( $n ) => $n > 1 ) ), 'notes written twice' );
		$sent = $this->mails_about( $order );
		$this->assertSame( array(), array_keys( array_filter( $sent, static fn ( $n ) => $n > 1 ) ), 'mails sent twice' );
		$this->assertCount( $mails, $sent, 'mails: ' . implode( ' | ', array_keys( $sent ) ) );
	}

	/**
	 * Makes every claim on the order older, as if taken `$seconds` ago (past the two minutes after which a claim
	 * whose holder never finished is taken over).
	 *
	 * @param int $order_id Order.
	 * @param int $seconds  How long ago.
	 */
	protected function age_claims( int $order_id, int $seconds ): void {
		global $wpdb;
		$aged = $wpdb->update( \ServicePay\WooCommerce\Orders\SettlementClaim::table(), array( 'created_at' => gmdate( 'Y-m-d H:i:s', time() - $seconds ) ), array( 'order_id' => $order_id ) );
		$this->assertGreaterThan( 0, (int) $aged, 'claims aged' );
	}

	/**
	 * What the shop owner and the payer see of the order, as the database holds it: its status, transaction id,
	 * every note, its product's stock and the mails sent about it.
	 *
	 * @param \WC_Order $order Order.
	 * @return array<string,mixed>
	 */
	protected function seen( \WC_Order $order ): array {
		$stock  = $this->stock_of( $order ); // Flushes the caches.
		$stored = wc_get_order( $order->get_id() );
		$notes  = array_map( static fn ( $note ) => $note->content, wc_get_order_notes( array( 'order_id' => $order->get_id() ) ) );
		sort( $notes );
		return array(
			'status'      => $stored->get_status(),
			'transaction' => $stored->get_transaction_id(),
			'notes'       => $notes,
			'stock'       => $stock,
			'mails'       => $this->mails_about( $stored ),
		);
	}

	/**
	 * Paid exactly once by the session, however many requests tried: processing, its transaction id, one payment
	 * note, one status change, one stock reduction, each note and mail once (the payer's "processing" mail and
	 * the shop's "new order"), no "second payment" note.
	 *
	 * @param \WC_Order           $order   Order.
	 * @param array<string,mixed> $session The paid session.
	 * @param string              $email   The payer's address.
	 */
	protected function assert_paid_once( \WC_Order $order, array $session, string $email ): void {
		wp_cache_flush(); // Other processes changed it: read the database, not this process's cache.
		$stored = wc_get_order( $order->get_id() );
		$this->assertSame( 'processing', $stored->get_status() );
		$this->assertSame( $session['id'], $stored->get_transaction_id() );
		$this->assertNotNull( $stored->get_date_paid() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'received by bank transfer. Session: ' . $session['id'] ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Pending payment to Processing' ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Stock levels reduced' ) );
		$this->assertSame( 0, $this->notes_containing( $order->get_id(), 'second ServicePay payment' ) );
		$this->assertSame( 4, $this->stock_of( $order ) );
		$this->assertSame( 1, $this->emails_to( $email ) );
		$this->assert_each_note_and_mail_once( $stored, 2 );
	}
}
