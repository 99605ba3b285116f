<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests;

/**
 * Another request settling an order slowly, as a second PHP process on the same database
 * (tests/support/slow-settler.php): the webhook that took the claim while the payer's return arrives, or the
 * return while the webhook arrives. The using test's tearDown() calls finish_settler() when $settler is set.
 */
trait SlowSettler {

	/** Signal folder of the running slow settler. */
	private string $signals = '';

	/** @var resource|null The slow settler's process. */
	private $settler = null;

	/** @var array<int,resource> Its stdout and stderr. */
	private array $pipes = array();

	/**
	 * Starts the other request and returns once it holds the session's claim and is still settling (it then
	 * sleeps `$milliseconds` before saving the order).
	 *
	 * @param \WC_Order           $order        Order.
	 * @param array<string,mixed> $session      The paid session.
	 * @param int                 $milliseconds How long it keeps the claim before saving the order.
	 * @param string              $claim        The claim it holds meanwhile (default: the paid session's).
	 * @param string              $fail         '' to succeed; `fail`: its payment_complete() then throws; `fail-paid`,
	 *                                          `fail-hold`: its writes of the processing or on-hold status are then
	 *                                          lost, after which WooCommerce still runs the status change (simulated
	 *                                          failures); `fail-paid-saved`: as `fail-paid`, but it waits only once
	 *                                          that lost save is over (the date paid stored, the status not);
	 *                                          `fail-note`: the hold note it writes for an order on hold already is
	 *                                          then refused.
	 */
	private function start_settler( \WC_Order $order, array $session, int $milliseconds, string $claim = '', string $fail = '' ): void {
		$this->signals = sys_get_temp_dir() . '/servicepay-wait-' . bin2hex( random_bytes( 6 ) );
		mkdir( $this->signals );
		$this->settler = proc_open(
			array( PHP_BINARY, dirname( __DIR__ ) . '/support/slow-settler.php', $this->signals, (string) $order->get_id(), wp_json_encode( $session ), (string) $milliseconds, $fail ),
			array( 1 => array( 'pipe', 'w' ), 2 => array( 'pipe', 'w' ) ),
			$this->pipes
		);
		$this->wait_for( 'ready' );
		touch( $this->signals . '/go' );
		$this->wait_for( 'claimed' );
		$this->assertTrue( \ServicePay\WooCommerce\Orders\SettlementClaim::exists( '' !== $claim ? $claim : 'session-paid:' . $session['id'] ), 'the other request holds the claim' );
		$this->assertFileDoesNotExist( $this->signals . '/done' );
	}

	private function wait_for( string $file ): void {
		$deadline = microtime( true ) + 60;
		while ( ! file_exists( $this->signals . '/' . $file ) && microtime( true ) < $deadline ) {
			usleep( 1000 );
		}
		$this->assertFileExists( $this->signals . '/' . $file, "the other request did not signal $file" );
	}

	/** Waits for the other request to end; returns what its apply() answered. */
	private function finish_settler(): string {
		$out = stream_get_contents( $this->pipes[1] ) . stream_get_contents( $this->pipes[2] );
		proc_close( $this->settler );
		$this->settler = null;
		array_map( 'unlink', glob( $this->signals . '/*' ) );
		rmdir( $this->signals );
		$lines  = array_values( array_filter( explode( "\n", trim( $out ) ) ) );
		$answer = json_decode( (string) end( $lines ), true );
		$this->assertIsArray( $answer, "the other request printed: $out" );
		return (string) $answer['result'];
	}

	/**
	 * A pending order with its paid session, and an address only its mails go to: what a race is run on.
	 *
	 * @return array{0:\WC_Order,1:array<string,mixed>,2:string}
	 */
	private function paid_order(): array {
		$order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$email = 'race-' . $order->get_id() . '@example.com';
		$order->set_billing_email( $email );
		$order->save();
		return array( $order, $this->session_of( $order, 'successful' ), $email );
	}

	/** The order as the database holds it now (the other process wrote it; this one's caches are dropped). */
	private function stored( \WC_Order $order ): \WC_Order {
		wp_cache_flush();
		return wc_get_order( $order->get_id() );
	}
}
