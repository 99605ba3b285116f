<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests;

use ServicePay\WooCommerce\Admin\SettingsNotices;
use ServicePay\WooCommerce\Api\ServiceProfile;
use ServicePay\WooCommerce\Gateway;

/**
 * The settings form's key fields (saving against the real service is in the integration run), and what the
 * classic checkout form gets back when it places an order (the block checkout's path is in the integration run).
 *
 * @group wordpress
 */
final class GatewayTest extends WordPressTestCase {

	private const KEY = 'sk_test_AbCdEfGhIjKlMnOpQrStUvWxYz012345';

	/** @var mixed */
	private $saved;

	/** @var mixed */
	private $profile;

	/** @var mixed */
	private $currency;

	protected function setUp(): void {
		parent::setUp();
		require_once WC_ABSPATH . 'includes/admin/class-wc-admin-settings.php';
		$this->saved    = get_option( 'woocommerce_servicepay_settings', null );
		$this->profile  = get_option( ServiceProfile::OPTION, null );
		$this->currency = get_option( 'woocommerce_currency' );
		update_option( 'woocommerce_servicepay_settings', array_merge( is_array( $this->saved ) ? $this->saved : array(), array( 'enabled' => 'yes', 'testmode' => 'yes', 'test_secret_key' => self::KEY ) ) );
		ServiceProfile::remember(
			'test',
			array(
				'currencies' => array(
					array( 'currency' => 'NGN', 'minAmount' => 100, 'maxAmount' => 10000000000 ),
					array( 'currency' => 'USD', 'minAmount' => 50, 'maxAmount' => 100000000 ),
				),
			)
		);
	}

	protected function tearDown(): void {
		null === $this->saved ? delete_option( 'woocommerce_servicepay_settings' ) : update_option( 'woocommerce_servicepay_settings', $this->saved );
		null === $this->profile ? delete_option( ServiceProfile::OPTION ) : update_option( ServiceProfile::OPTION, $this->profile );
		update_option( 'woocommerce_currency', $this->currency );
		ob_start();
		SettingsNotices::render(); // Forgets this test's notices.
		ob_end_clean();
		parent::tearDown();
	}

	/** The plugin's error notices so far. */
	private function errors_noted(): int {
		return count( array_filter( SettingsNotices::all(), static fn ( $notice ) => 'error' === $notice['kind'] ) );
	}

	public function test_the_form_never_prints_a_saved_key_in_full(): void {
		$gateway = new Gateway();
		$html    = $gateway->generate_settings_html( array(), false );
		$this->assertStringNotContainsString( self::KEY, $html );
		$this->assertStringNotContainsString( 'AbCdEfGh', $html );
		$this->assertStringContainsString( 'sk_test_…2345', $html );
	}

	public function test_it_refunds_and_links_the_transaction_to_the_portal(): void {
		update_option( 'woocommerce_servicepay_settings', array_merge( get_option( 'woocommerce_servicepay_settings' ), array( 'api_url' => 'https://pay.example/' ) ) );
		$gateway = new Gateway();
		$this->assertTrue( $gateway->supports( 'refunds' ) );
		$order = wc_create_order();
		$order->set_payment_method( Gateway::ID );
		$order->set_transaction_id( 'ses_abc123' );
		$order->save();
		$this->assertSame( 'https://pay.example/portal/sessions/ses_abc123', $gateway->get_transaction_url( $order ) );
		// An order no ServicePay session paid is not refunded through ServicePay: the order screen says why.
		$refused = $gateway->process_refund( $order->get_id(), 5.0, '' );
		$this->assertInstanceOf( \WP_Error::class, $refused );
		$this->assertStringContainsString( 'was not paid through ServicePay', $refused->get_error_message() );
		$order->delete( true );
	}

	/** @return array<string,array{0:string,1:string}> */
	public function refused(): array {
		return array(
			'a publishable key'         => array( 'test_secret_key', 'pk_test_AbCdEfGhIjKlMnOpQrStUvWxYz099999' ),
			'a client secret'           => array( 'test_secret_key', 'cs_test_AbCdEfGhIjKlMnOpQrStUvWxYz099999' ),
			'a live key in the test box' => array( 'test_secret_key', 'sk_live_' . str_repeat( '0', 32 ) ), // made up: the shape of a live key
			'a test key in the live box' => array( 'live_secret_key', 'sk_test_AbCdEfGhIjKlMnOpQrStUvWxYz099999' ),
			'half a key'                => array( 'test_secret_key', 'sk_test_AbCdEf' ),
			'not a key'                 => array( 'test_secret_key', 'hello' ),
		);
	}

	/** @dataProvider refused */
	public function test_a_wrong_kind_of_key_is_refused_with_a_reason_and_the_old_one_kept( string $field, string $value ): void {
		$gateway = new Gateway();
		$old     = (string) $gateway->get_option( $field );
		$before  = $this->errors_noted();
		$this->assertSame( $old, $gateway->validate_servicepay_secret_field( $field, $value ) );
		$this->assertSame( $before + 1, $this->errors_noted() );
		$notices = SettingsNotices::all();
		$this->assertStringContainsString( 'secret key was not saved', (string) end( $notices )['text'] );
	}

	public function test_offered_only_in_a_currency_the_service_takes(): void {
		update_option( 'woocommerce_currency', 'USD' );
		$this->assertTrue( ( new Gateway() )->is_available() );
		update_option( 'woocommerce_currency', 'EUR' );
		$this->assertFalse( ( new Gateway() )->is_available() );
		$page = $this->settings_page();
		$this->assertStringContainsString( 'Your store&#039;s currency is EUR, which ServicePay does not take (it takes NGN, USD)', $page );
	}

	public function test_not_offered_before_the_service_said_what_it_takes(): void {
		delete_option( ServiceProfile::OPTION );
		// A page does not ask the service again within the hour after a failed read (here: a read held off).
		set_transient( 'servicepay_profile_retry_test', 1, 60 );
		update_option( 'woocommerce_currency', 'USD' );
		$this->assertFalse( ( new Gateway() )->is_available() );
		$this->assertStringContainsString( 'has not said yet which currencies it takes', $this->settings_page() );
		delete_transient( 'servicepay_profile_retry_test' );
	}

	public function test_an_order_total_outside_the_currencys_bounds_is_not_offered_on_its_pay_page(): void {
		update_option( 'woocommerce_currency', 'USD' );
		$order = $this->order_with_session( '0.40', 'ses_' . wp_generate_password( 24, false ) );
		set_query_var( 'order-pay', $order->get_id() );
		try {
			$this->assertFalse( ( new Gateway() )->is_available() );
			$order->set_total( '0.50' );
			$order->save();
			$this->assertTrue( ( new Gateway() )->is_available() );
		} finally {
			set_query_var( 'order-pay', '' );
		}
	}

	/** The gateway's settings page as `admin_options` prints it. */
	private function settings_page(): string {
		ob_start();
		( new Gateway() )->admin_options();
		return (string) ob_get_clean();
	}

	public function test_an_empty_box_keeps_the_saved_key(): void {
		$this->assertSame( self::KEY, ( new Gateway() )->validate_servicepay_secret_field( 'test_secret_key', '' ) );
	}

	public function test_the_classic_checkout_sends_the_payer_to_their_orders_pay_page_and_takes_no_money_yet(): void {
		// The classic form posts to ?wc-ajax=checkout: not a REST request, unlike the block checkout.
		$this->assertFalse( defined( 'REST_REQUEST' ) && REST_REQUEST );
		$order  = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$result = ( new Gateway() )->process_payment( $order->get_id() );
		$this->assertSame( 'success', $result['result'] );
		$this->assertSame( $order->get_checkout_payment_url( true ), $result['redirect'] );
		$this->assertStringContainsString( 'key=' . $order->get_order_key(), $result['redirect'] );
		$placed = wc_get_order( $order->get_id() );
		$this->assertSame( 'pending', $placed->get_status() );
		$this->assertTrue( $placed->needs_payment() );
	}

	public function test_the_pay_page_shows_the_transfer_button_only_while_the_order_needs_payment(): void {
		$order = $this->order_with_session( '25.00', 'ses_' . wp_generate_password( 24, false ) );
		$page  = static function ( int $order_id ): string {
			ob_start();
			( new Gateway() )->receipt_page( $order_id );
			return (string) ob_get_clean();
		};
		$shown = $page( $order->get_id() );
		$this->assertStringContainsString( 'servicepay-open', $shown );
		// WooCommerce's button classes, and its notice templates for what the script may have to say.
		$this->assertMatchesRegularExpression( '/class="button alt servicepay-open[^"]*"/', $shown );
		$this->assertMatchesRegularExpression( '/press (&quot;|&#8220;|")Pay by bank transfer(&quot;|&#8221;|") to get a new account number/', $shown );
		$order->payment_complete( 'ses_paid' );
		$this->assertSame( '', $page( $order->get_id() ) );
	}

	public function test_an_order_that_does_not_exist_is_refused(): void {
		$result = ( new Gateway() )->process_payment( PHP_INT_MAX );
		$this->assertSame( 'failure', $result['result'] );
	}
}
