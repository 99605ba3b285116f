<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests;

use PHPUnit\Framework\TestCase;
use ServicePay\WooCommerce\Settings;

/**
 * The questions the plugin asks of its settings, from values as a shop stores them (no WordPress needed).
 */
final class SettingsTest extends TestCase {

	private const TEST_KEY = 'sk_test_AbCdEfGhIjKlMnOpQrStUvWxYz012345';

	/** A made-up live key, built at run time so that no live-key-shaped text sits in the code. */
	private static function live_key(): string {
		return 'sk_live_' . str_repeat( '0', 32 );
	}

	public function test_test_mode_is_the_default_and_only_no_switches_to_live(): void {
		$this->assertSame( 'test', ( new Settings( array() ) )->environment() );
		$this->assertSame( 'test', ( new Settings( array( 'testmode' => 'yes' ) ) )->environment() );
		$this->assertSame( 'live', ( new Settings( array( 'testmode' => 'no' ) ) )->environment() );
	}

	public function test_the_secret_key_is_the_one_of_the_active_environment(): void {
		$keys = array(
			'test_secret_key' => self::TEST_KEY,
			'live_secret_key' => self::live_key(),
		);
		$this->assertSame( self::TEST_KEY, ( new Settings( $keys + array( 'testmode' => 'yes' ) ) )->secret_key() );
		$this->assertSame( self::live_key(), ( new Settings( $keys + array( 'testmode' => 'no' ) ) )->secret_key() );
		// Live mode with only a test key saved has no key: the test key is never used for live payments.
		$this->assertSame( '', ( new Settings( array( 'testmode' => 'no', 'test_secret_key' => self::TEST_KEY ) ) )->secret_key() );
	}

	public function test_widget_js_comes_from_the_host_of_the_keys_environment(): void {
		$settings = new Settings(
			array(
				'testmode'        => 'no',
				'test_widget_url' => 'https://test-widget.example/',
				'live_widget_url' => 'https://widget.example',
			)
		);
		$this->assertSame( 'https://widget.example/latest/widget.js', $settings->widget_script_url() );
		$this->assertSame( 'https://test-widget.example/latest/widget.js', $settings->widget_script_url( 'test' ) );
		$this->assertSame( 'https://widget.example/latest/widget.js', $settings->widget_script_url( 'live' ) );
		$this->assertSame( 'http://127.0.0.1:4243/latest/widget.js', ( new Settings( array() ) )->widget_script_url() );
		$this->assertSame( 'https://api.example', ( new Settings( array( 'api_url' => 'https://api.example//' ) ) )->api_url() );
	}

	public function test_ready_only_when_enabled_with_a_key_for_the_active_environment(): void {
		$this->assertTrue( ( new Settings( array( 'enabled' => 'yes', 'test_secret_key' => self::TEST_KEY ) ) )->is_ready() );
		$this->assertFalse( ( new Settings( array( 'enabled' => 'no', 'test_secret_key' => self::TEST_KEY ) ) )->is_ready() );
		$this->assertFalse( ( new Settings( array( 'enabled' => 'yes' ) ) )->is_ready() );
		$this->assertFalse( ( new Settings( array( 'enabled' => 'yes', 'testmode' => 'no', 'test_secret_key' => self::TEST_KEY ) ) )->is_ready() );
	}

	public function test_values_that_are_not_text_are_ignored(): void {
		$settings = new Settings( array( 'enabled' => array( 'yes' ), 'testmode' => null, 'title' => 7 ) );
		$this->assertSame( 'no', $settings->get( 'enabled' ) );
		$this->assertSame( 'test', $settings->environment() );
		$this->assertSame( '7', $settings->get( 'title' ) );
	}
}
