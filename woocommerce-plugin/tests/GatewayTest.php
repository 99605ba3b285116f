<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests;

use ServicePay\WooCommerce\Gateway;

/**
 * The settings form's key fields (saving against the real service is in the integration run).
 *
 * @group wordpress
 */
final class GatewayTest extends WordPressTestCase {

	private const KEY = 'sk_test_AbCdEfGhIjKlMnOpQrStUvWxYz012345';

	/** @var mixed */
	private $saved;

	protected function setUp(): void {
		parent::setUp();
		require_once WC_ABSPATH . 'includes/admin/class-wc-admin-settings.php';
		$this->saved = get_option( 'woocommerce_servicepay_settings', null );
		update_option( 'woocommerce_servicepay_settings', array_merge( is_array( $this->saved ) ? $this->saved : array(), array( 'test_secret_key' => self::KEY ) ) );
	}

	protected function tearDown(): void {
		null === $this->saved ? delete_option( 'woocommerce_servicepay_settings' ) : update_option( 'woocommerce_servicepay_settings', $this->saved );
		parent::tearDown();
	}

	private function errors_shown(): string {
		ob_start();
		\WC_Admin_Settings::show_messages();
		return (string) ob_get_clean();
	}

	public function test_the_form_never_prints_a_saved_key_in_full(): void {
		$gateway = new Gateway();
		$html    = $gateway->generate_settings_html( array(), false );
		$this->assertStringNotContainsString( self::KEY, $html );
		$this->assertStringNotContainsString( 'AbCdEfGh', $html );
		$this->assertStringContainsString( 'sk_test_…2345', $html );
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
		$before  = substr_count( $this->errors_shown(), 'class="error' );
		$this->assertSame( $old, $gateway->validate_servicepay_secret_field( $field, $value ) );
		$this->assertSame( $before + 1, substr_count( $this->errors_shown(), 'class="error' ) );
	}

	public function test_an_empty_box_keeps_the_saved_key(): void {
		$this->assertSame( self::KEY, ( new Gateway() )->validate_servicepay_secret_field( 'test_secret_key', '' ) );
	}
}
