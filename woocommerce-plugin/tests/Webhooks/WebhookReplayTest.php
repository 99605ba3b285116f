<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Webhooks;

use ServicePay\WooCommerce\Orders\OrderSessions;
use ServicePay\WooCommerce\Orders\Settlement;
use ServicePay\WooCommerce\Tests\SignedWebhooks;
use ServicePay\WooCommerce\Tests\SlowSettler;
use ServicePay\WooCommerce\Tests\WordPressTestCase;

/**
 * A payment settles its order once, ever: a replay of its `session.successful` (the portal's "Resend", the
 * service's redelivery) long after, when the shop owner has set the paid order back to an unpaid status, changes
 * nothing; another payment (a new session) of an order set back to pending still pays it, once.
 *
 * @group wordpress
 */
final class WebhookReplayTest extends WordPressTestCase {

	use SignedWebhooks;
	use SlowSettler;

	protected function setUp(): void {
		parent::setUp();
		$this->use_test_endpoint();
	}

	protected function tearDown(): void {
		$this->drop_test_endpoint();
		parent::tearDown();
	}

	/**
	 * Statuses a shop owner can set a paid order back to, all of which payment_complete() accepts.
	 *
	 * @return array<string,array{0:string}>
	 */
	public function set_back_to(): array {
		return array(
			'on hold'   => array( 'on-hold' ),
			'pending'   => array( 'pending' ),
			'cancelled' => array( 'cancelled' ),
			'failed'    => array( 'failed' ),
		);
	}

	/**
	 * @dataProvider set_back_to
	 */
	public function test_a_replay_long_after_the_shop_set_the_paid_order_back_changes_nothing( string $status ): void {
		[ $order, $session, $email ] = $this->paid_order();
		$body                        = $this->event_of( $session );
		$this->assertSame( array( 200, true, 'settled' ), $this->received( $this->deliver_signed( $body ) ) );
		$this->assert_paid_once( $order, $session, $email );

		// The shop owner sets the paid order back on the order screen; three minutes later (past the two minutes
		// after which the claims of a request that never finished are taken over) the payment comes again.
		$this->stored( $order )->update_status( $status, '', true );
		$this->age_claims( $order->get_id(), 180 );
		$before = $this->seen( $order );
		$this->assertSame( $status, $before['status'] );

		// The portal's "Resend" (the same body), the service's redelivery (another event of the same session), the
		// payer's return and the scheduled check (Settlement::apply with the session as the service describes it).
		$this->assertSame( array( 200, true, 'already_paid' ), $this->received( $this->deliver_signed( $body ) ) );
		$this->assertSame( array( 200, true, 'already_paid' ), $this->received( $this->deliver_signed( $this->event_of( $session ) ) ) );
		$this->assertSame( Settlement::ALREADY_PAID, Settlement::apply( $this->stored( $order ), $session ) );
		$this->assertFalse( Settlement::awaits_payment( $order->get_id() ), 'nothing to deliver again' );

		// No note, no stock change, no mail, and the status the shop owner chose.
		$this->assertSame( $before, $this->seen( $order ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'received by bank transfer' ) );
		$this->assertSame( 1, $this->emails_to( $email ) );
	}

	public function test_a_new_session_pays_an_order_the_shop_set_back_to_pending_once(): void {
		[ $order, $first, $email ] = $this->paid_order();
		$this->assertSame( array( 200, true, 'settled' ), $this->received( $this->deliver_signed( $this->event_of( $first ) ) ) );
		$this->assert_paid_once( $order, $first, $email );

		// The shop owner sets it back to pending (WooCommerce gives its stock back), and the payer pays it again
		// with a new session, three minutes on.
		$pending = $this->stored( $order );
		$pending->update_status( 'pending', '', true );
		$this->assertSame( 5, $this->stock_of( $order ) );
		$this->age_claims( $order->get_id(), 180 );
		$pending = $this->stored( $order );
		OrderSessions::remember( $pending, array( 'id' => 'ses_' . wp_generate_password( 24, false ) ), 2 );
		$pending->save();
		$second = $this->session_of( $this->stored( $order ), 'successful' );
		$this->assertNotSame( $first['id'], $second['id'] );
		$body = $this->event_of( $second );

		$this->assertSame( array( 200, true, 'settled' ), $this->received( $this->deliver_signed( $body ) ) );
		$paid = $this->seen( $order );
		$this->assertSame( 'processing', $paid['status'] );
		$this->assertSame( $second['id'], $paid['transaction'] );
		$this->assertSame( 4, $paid['stock'] );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'received by bank transfer. Session: ' . $second['id'] ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'received by bank transfer. Session: ' . $first['id'] ) );
		$this->assertSame( 0, $this->notes_containing( $order->get_id(), 'second ServicePay payment' ) );
		$this->assertSame( 2, $this->emails_to( $email ), 'one "processing" mail per payment' );

		// Its replays, and the first payment's, change nothing, even once the claims are old.
		$this->age_claims( $order->get_id(), 180 );
		$this->assertSame( array( 200, true, 'already_paid' ), $this->received( $this->deliver_signed( $body ) ) );
		$this->assertSame( array( 200, true, 'already_paid' ), $this->received( $this->deliver_signed( $this->event_of( $first ) ) ) );
		$this->assertSame( $paid, $this->seen( $order ) );
	}
}
