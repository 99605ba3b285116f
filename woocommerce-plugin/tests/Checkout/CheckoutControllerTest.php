<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Checkout;

use ServicePay\WooCommerce\Checkout\CheckoutController;
use ServicePay\WooCommerce\Tests\WordPressTestCase;

/**
 * Who may open a session for an order (the session itself is made against the real service in the
 * integration run).
 *
 * @group wordpress
 */
final class CheckoutControllerTest extends WordPressTestCase {

	private function ask( int $order_id, string $key, string $nonce, string $what = 'session' ): \WP_REST_Response {
		$request = new \WP_REST_Request( 'POST', '/servicepay/v1/orders/' . $order_id . '/' . $what );
		$request->set_header( 'content-type', 'application/json' );
		$request->set_body( (string) wp_json_encode( array( 'key' => $key, 'nonce' => $nonce ) ) );
		return rest_do_request( $request );
	}

	public function test_refuses_a_stale_nonce_a_wrong_key_and_someone_elses_order(): void {
		wp_set_current_user( 0 );
		$order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$nonce = wp_create_nonce( CheckoutController::NONCE_ACTION );

		$this->assertSame( 403, $this->ask( $order->get_id(), $order->get_order_key(), 'stale' )->get_status() );
		$this->assertSame( 404, $this->ask( $order->get_id(), 'wc_order_guess', $nonce )->get_status() );
		$this->assertSame( 404, $this->ask( 999999, $order->get_order_key(), $nonce )->get_status() );
		$this->assertSame( 404, $this->ask( $order->get_id(), 'wc_order_guess', $nonce, 'confirm' )->get_status() );

		// A customer's order, asked for by a guest who somehow has its key.
		$order->set_customer_id( 1 );
		$order->save();
		$this->assertSame( 404, $this->ask( $order->get_id(), $order->get_order_key(), $nonce )->get_status() );

		// An order paid another way.
		$cod = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$cod->set_payment_method( 'cod' );
		$cod->save();
		$this->assertSame( 409, $this->ask( $cod->get_id(), $cod->get_order_key(), $nonce )->get_status() );
	}

	public function test_a_paid_order_answers_paid_without_a_new_session(): void {
		wp_set_current_user( 0 );
		$order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$order->payment_complete( 'ses_done' );
		$response = $this->ask( $order->get_id(), $order->get_order_key(), wp_create_nonce( CheckoutController::NONCE_ACTION ) );
		$this->assertSame( 200, $response->get_status() );
		$this->assertTrue( $response->get_data()['paid'] );
		$this->assertSame( 'processing', $response->get_data()['orderStatus'] );
		$this->assertArrayNotHasKey( 'clientSecret', $response->get_data() );
	}

	public function test_an_order_on_hold_is_not_reported_paid_and_gets_no_new_session(): void {
		wp_set_current_user( 0 );
		$order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$order->update_status( 'on-hold' );
		$response = $this->ask( $order->get_id(), $order->get_order_key(), wp_create_nonce( CheckoutController::NONCE_ACTION ) );
		$this->assertSame( 200, $response->get_status() );
		$this->assertSame( array( 'paid', 'orderStatus', 'redirect' ), array_keys( $response->get_data() ) );
		$this->assertFalse( $response->get_data()['paid'] );
		$this->assertSame( 'on-hold', $response->get_data()['orderStatus'] );
	}
}
