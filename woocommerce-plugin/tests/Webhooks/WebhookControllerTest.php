<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Webhooks;

use ServicePay\WooCommerce\Orders\OrderSessions;
use ServicePay\WooCommerce\Orders\SettlementClaim;
use ServicePay\WooCommerce\Tests\SignedWebhooks;
use ServicePay\WooCommerce\Tests\SlowSettler;
use ServicePay\WooCommerce\Tests\WordPressTestCase;
use ServicePay\WooCommerce\Webhooks\EndpointStore;
use ServicePay\WooCommerce\Webhooks\SignatureVerifier;

/**
 * Through WordPress's REST server (rest_do_request), as a delivery arrives. The races run the other request as
 * a second PHP process on the same database (tests/support/slow-settler.php).
 *
 * @group wordpress
 */
final class WebhookControllerTest extends WordPressTestCase {

	use SignedWebhooks;
	use SlowSettler;

	protected function setUp(): void {
		parent::setUp();
		$this->use_test_endpoint();
	}

	protected function tearDown(): void {
		if ( null !== $this->settler ) {
			$this->finish_settler();
		}
		$this->drop_test_endpoint();
		parent::tearDown();
	}

	private function deliver( string $body, ?string $header ): \WP_REST_Response {
		$request = new \WP_REST_Request( 'POST', '/servicepay/v1/webhook' );
		$request->set_header( 'content-type', 'application/json' );
		if ( null !== $header ) {
			$request->set_header( 'x-service-signature', $header );
		}
		$request->set_body( $body );
		return rest_do_request( $request );
	}

	private function event_for( \WC_Order $order, string $status = 'successful' ): string {
		return $this->event_of( $this->session_of( $order, $status ) );
	}

	public function test_the_stored_secret_is_sealed_not_in_the_clear(): void {
		$raw = (string) wp_json_encode( get_option( EndpointStore::OPTION ) );
		$this->assertStringNotContainsString( self::webhook_secret(), $raw );
		$this->assertSame( array( 'test' => self::webhook_secret() ), array_intersect_key( EndpointStore::secrets(), array( 'test' => 1 ) ) );
	}

	public function test_bad_signatures_get_401_and_change_nothing(): void {
		$order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$body  = $this->event_for( $order );
		$cases = array(
			'no header'      => null,
			'another secret' => SignatureVerifier::sign( $body, 'whsec_other', time() ),
			'too old'        => SignatureVerifier::sign( $body, self::webhook_secret(), time() - 301 ),
			'body altered'   => SignatureVerifier::sign( str_replace( '2500', '2501', $body ), self::webhook_secret(), time() ),
		);
		foreach ( $cases as $label => $header ) {
			$response = $this->deliver( $body, $header );
			$this->assertSame( 401, $response->get_status(), $label );
		}
		// Not JSON at all, unsigned: still 401 (the signature is checked before the body is read).
		$this->assertSame( 401, $this->deliver( '{not json', 't=1,v1=' . str_repeat( '0', 64 ) )->get_status() );
		$fresh = wc_get_order( $order->get_id() );
		$this->assertSame( 'pending', $fresh->get_status() );
		$this->assertSame( '', $fresh->get_transaction_id() );
	}

	public function test_a_signed_event_settles_and_its_replay_changes_nothing(): void {
		$order  = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$saved  = wc_get_order( $order->get_id() );
		// Should the stack's database drop a write, this says so here rather than as a settlement result.
		$this->assertSame( array( 2500, 'USD' ), array( \ServicePay\WooCommerce\Money::to_minor( (string) $saved->get_total( 'edit' ), 'USD' ), $saved->get_currency() ), 'the order as stored' );
		$body   = $this->event_for( $order );
		$first  = $this->deliver( $body, SignatureVerifier::sign( $body, self::webhook_secret(), time() ) );
		$replay = $this->deliver( $body, SignatureVerifier::sign( $body, self::webhook_secret(), time() ) );
		$this->assertSame( array( 200, 'settled' ), array( $first->get_status(), $first->get_data()['result'] ) );
		$this->assertSame( array( 200, 'already_paid' ), array( $replay->get_status(), $replay->get_data()['result'] ) );
		$this->assertSame( 'processing', wc_get_order( $order->get_id() )->get_status() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'received by bank transfer' ) );
	}

	public function test_a_signed_body_that_is_not_an_event_gets_400_and_an_unknown_order_200(): void {
		$body = '{"hello":"world"}';
		$this->assertSame( 400, $this->deliver( $body, SignatureVerifier::sign( $body, self::webhook_secret(), time() ) )->get_status() );
		$unknown = (string) wp_json_encode(
			array(
				'id'   => 'evt_x',
				'type' => 'session.successful',
				'data' => array( 'session' => array( 'id' => 'ses_unknown', 'status' => 'successful', 'metadata' => array( 'wc_order_id' => '999999' ) ) ),
			)
		);
		$response = $this->deliver( $unknown, SignatureVerifier::sign( $unknown, self::webhook_secret(), time() ) );
		$this->assertSame( array( 200, 'ignored' ), array( $response->get_status(), $response->get_data()['result'] ) );
	}

	public function test_a_delivery_racing_a_settlement_that_fails_after_the_wait_is_answered_500_and_its_redelivery_settles_once(): void {
		[ $order, $session, $email ] = $this->paid_order();
		$body                        = $this->event_of( $session );
		// The other request (the payer's return) holds the claims for 3.5 s, longer than the 2 s a delivery waits,
		// then fails: payment_complete() throws, it gives the claims back with the order still pending.
		$this->start_settler( $order, $session, 3500, '', 'fail' );

		[ $status, $answer ] = $this->deliver_signed( $body );

		// The delivery stopped waiting with the order unpaid and its claim held: not 200 (which would end the
		// deliveries), but the retryable 500.
		$this->assertSame( array( 500, 'servicepay_retry' ), array( $status, $answer['code'] ?? null ) );
		$this->assertArrayNotHasKey( 'result', $answer );
		$this->assertFileDoesNotExist( $this->signals . '/done', 'it answered before the other request failed' );
		$right_after = $this->stored( $order );
		$this->assertSame( 'pending', $right_after->get_status() );
		$this->assertSame( '', $right_after->get_transaction_id() );

		$this->assertSame( 'threw: The order could not be marked paid; it will be retried.', $this->finish_settler() );
		$this->assertSame( 'pending', $this->stored( $order )->get_status(), 'nobody paid it meanwhile' );
		$this->assertSame( 5, $this->stock_of( $order ) );

		// The service delivers again: the claims are free, and this delivery settles the order.
		$this->assertSame( array( 200, true, 'settled' ), $this->received( $this->deliver_signed( $body ) ) );
		$this->assert_paid_once( $order, $session, $email );
		// A replay of the settled event is answered 200 and changes nothing.
		$this->assertSame( array( 200, true, 'already_paid' ), $this->received( $this->deliver_signed( $body ) ) );
		$this->assert_paid_once( $order, $session, $email );
	}

	public function test_the_redelivery_after_a_settlement_whose_paid_status_the_database_lost_stores_it_without_a_second_note_or_mail(): void {
		[ $order, $session, $email ] = $this->paid_order();
		$body                        = $this->event_of( $session );
		// The other request (the payer's return) saves the order paid after 3.5 s, longer than the 2 s a delivery
		// waits, and the database loses that write: WooCommerce still writes its notes, sends its mails and
		// reduces the stock, then the settlement gives the claims back with the order pending.
		$this->start_settler( $order, $session, 3500, '', 'fail-paid' );

		$this->assertSame( 500, $this->deliver_signed( $body )[0] );
		$this->assertSame( 'threw: The order could not be marked paid; it will be retried.', $this->finish_settler() );
		$this->assertSame( 'pending', $this->stored( $order )->get_status() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'received by bank transfer' ) );
		$this->assertSame( 1, $this->emails_to( $email ) );

		// The redelivery settles it by storing the paid status alone.
		$this->assertSame( array( 200, true, 'settled' ), $this->received( $this->deliver_signed( $body ) ) );
		$this->assert_paid_once( $order, $session, $email );
		$this->assertSame( array( 200, true, 'already_paid' ), $this->received( $this->deliver_signed( $body ) ) );
		$this->assert_paid_once( $order, $session, $email );
	}

	public function test_a_delivery_finding_the_date_paid_stored_but_the_paid_status_lost_is_answered_500_and_its_redelivery_settles_once(): void {
		[ $order, $session, $email ] = $this->paid_order();
		$body                        = $this->event_of( $session );
		// The other request (the payer's return) saved the order paid, and the database lost the order row's write
		// (its status and transaction id) but kept the date paid, which HPOS stores in another table
		// (wc_order_operational_data): WooCommerce writes the tables one statement each, and a failed upsert of the
		// order row reads as "0 rows". It then holds the claims for 3.5 s, past the 2 s a delivery waits.
		$this->start_settler( $order, $session, 3500, '', 'fail-paid-saved' );
		$torn = $this->stored( $order );
		$this->assertSame( 'pending', $torn->get_status() );
		$this->assertSame( '', $torn->get_transaction_id() );
		$this->assertNotNull( $torn->get_date_paid(), 'the date paid outlived the lost status' );
		$this->assertFalse( $torn->is_paid() );

		// Still unpaid, whatever its date paid says: the retryable 500, not 200 (which would end the deliveries).
		[ $status, $answer ] = $this->deliver_signed( $body );
		$this->assertSame( array( 500, 'servicepay_retry' ), array( $status, $answer['code'] ?? null ) );
		$this->assertFileDoesNotExist( $this->signals . '/done', 'it answered before the other request gave up' );

		$this->assertSame( 'threw: The order could not be marked paid; it will be retried.', $this->finish_settler() );
		$this->assertSame( 'pending', $this->stored( $order )->get_status() );
		// The redelivery settles it, storing the paid status alone (WooCommerce's change ran in the other request).
		$this->assertSame( array( 200, true, 'settled' ), $this->received( $this->deliver_signed( $body ) ) );
		$this->assert_paid_once( $order, $session, $email );
		$this->assertSame( array( 200, true, 'already_paid' ), $this->received( $this->deliver_signed( $body ) ) );
		$this->assert_paid_once( $order, $session, $email );
	}

	public function test_a_delivery_racing_a_settlement_slower_than_the_wait_is_answered_500_and_its_redelivery_200_already_paid(): void {
		[ $order, $session, $email ] = $this->paid_order();
		$body                        = $this->event_of( $session );
		$this->start_settler( $order, $session, 3500 );

		[ $status, $answer ] = $this->deliver_signed( $body );

		$this->assertSame( array( 500, 'servicepay_retry' ), array( $status, $answer['code'] ?? null ) );
		$this->assertFileDoesNotExist( $this->signals . '/done', 'it answered before the other request finished' );
		$this->assertSame( 'pending', $this->stored( $order )->get_status() );

		// The other request settles it; the redelivery finds it paid.
		$this->assertSame( 'settled', $this->finish_settler() );
		$this->assertSame( array( 200, true, 'already_paid' ), $this->received( $this->deliver_signed( $body ) ) );
		$stored = $this->stored( $order );
		$this->assertSame( 'processing', $stored->get_status() );
		$this->assertSame( $session['id'], $stored->get_transaction_id() );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'received by bank transfer. Session: ' . $session['id'] ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'Stock levels reduced' ) );
		$this->assertSame( 4, $this->stock_of( $order ) );
		$this->assertSame( 1, $this->emails_to( $email ) );
	}

	public function test_a_second_session_paying_a_paid_order_is_answered_200_even_once_the_order_is_cancelled(): void {
		[ $order, $session ] = $this->paid_order();
		$this->assertSame( array( 200, true, 'settled' ), $this->received( $this->deliver_signed( $this->event_of( $session ) ) ) );

		// Another session pays the paid order: nothing this delivery can settle, so 200 (and a "refund it" note).
		$second = $this->stored( $order );
		OrderSessions::remember( $second, array( 'id' => 'ses_' . wp_generate_password( 24, false ) ), 2 );
		$second->save();
		$body = $this->event_of( $this->session_of( $second, 'successful' ) );
		$this->assertSame( array( 200, true, 'already_paid' ), $this->received( $this->deliver_signed( $body ) ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'A second ServicePay payment arrived' ) );

		// Paid, then cancelled by the shop (a status payment_complete() accepts): a third session's payment is
		// still a second payment of a paid order, answered 200, not a retry the service would repeat for ever.
		$third = $this->stored( $order );
		$third->update_status( 'cancelled' );
		OrderSessions::remember( $third, array( 'id' => 'ses_' . wp_generate_password( 24, false ) ), 3 );
		$third->save();
		$body = $this->event_of( $this->session_of( $third, 'successful' ) );
		$this->assertSame( array( 200, true, 'already_paid' ), $this->received( $this->deliver_signed( $body ) ) );
		$this->assertSame( 2, $this->notes_containing( $order->get_id(), 'A second ServicePay payment arrived' ) );
		$stored = $this->stored( $order );
		$this->assertSame( 'cancelled', $stored->get_status() );
		$this->assertSame( $session['id'], $stored->get_transaction_id() );
	}

	public function test_a_payment_for_an_order_the_shop_marked_processing_by_hand_without_a_date_paid_is_answered_200_not_retried(): void {
		// A download (WooCommerce completes such an order when paid, so marking it processing sets no date paid),
		// marked processing on the order screen before the transfer arrived: not a status payment_complete()
		// accepts, so ServicePay's payment cannot settle it, however often it is delivered.
		$order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ), 'USD', true );
		$this->assertFalse( $order->needs_processing() );
		$order->update_status( 'processing', '', true );
		$marked = $this->stored( $order );
		$this->assertSame( 'processing', $marked->get_status() );
		$this->assertNull( $marked->get_date_paid() );
		$this->assertSame( '', $marked->get_transaction_id() );
		$body = $this->event_of( $this->session_of( $marked, 'successful' ) );

		// 200, not the retryable 500 (which would have the service deliver it again and again for nothing): the
		// shop owner is asked once to refund the payment.
		$this->assertSame( array( 200, true, 'already_paid' ), $this->received( $this->deliver_signed( $body ) ) );
		$this->assertSame( array( 200, true, 'already_paid' ), $this->received( $this->deliver_signed( $body ) ) );
		$this->assertSame( 1, $this->notes_containing( $order->get_id(), 'A second ServicePay payment arrived' ) );
		$stored = $this->stored( $order );
		$this->assertSame( 'processing', $stored->get_status() );
		$this->assertNull( $stored->get_date_paid() );
		$this->assertSame( 0, $this->notes_containing( $order->get_id(), 'received by bank transfer' ) );
	}

	public function test_an_unpaid_order_carrying_the_session_as_its_transaction_id_is_answered_500_while_another_request_holds_the_claim(): void {
		global $wpdb;
		[ $order, $session, $email ] = $this->paid_order();
		// The session's id recorded as the order's transaction id while the order is still pending with no date
		// paid: typed into the order screen's "Transaction ID", or left by a save whose status write the database
		// lost (on posts storage the id is meta of its own). WooCommerce does not count the order paid.
		$order->set_transaction_id( $session['id'] );
		$order->save();
		// Another request claimed the session ten seconds ago (past the 2 s a delivery waits) and has not stored
		// the order paid: it may still give up.
		$claim = 'session-paid:' . $session['id'];
		$this->assertTrue( SettlementClaim::take( $claim, $order->get_id() ) );
		$wpdb->update( SettlementClaim::table(), array( 'created_at' => gmdate( 'Y-m-d H:i:s', time() - 10 ) ), array( 'claim_key' => $claim ) );
		$body = $this->event_of( $session );

		// Not 200 already_paid, which would end the deliveries with the order unpaid: the retryable 500.
		[ $status, $answer ] = $this->deliver_signed( $body );
		$this->assertSame( array( 500, 'servicepay_retry' ), array( $status, $answer['code'] ?? null ) );
		$this->assertSame( 'pending', $this->stored( $order )->get_status() );

		// That request gave up (its claim back, the order unchanged): the redelivery settles the order once.
		SettlementClaim::release( $claim );
		$this->assertSame( array( 200, true, 'settled' ), $this->received( $this->deliver_signed( $body ) ) );
		$this->assert_paid_once( $order, $session, $email );
	}
}
